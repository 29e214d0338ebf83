package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.PutFlags;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.lang.invoke.VarHandle;

/**
 * The device's one-sided memory, one libmp window over every rank's area of the same layout:
 * <pre>
 *   [credit words: size x 8][credit sources: size x 8][get bounce: bounceBytes][rendezvous area: poolBytes]
 * </pre>
 * A rank's credit word {@code p} is written by peer {@code p} only: how many of this rank's frames {@code p} has taken
 * out of its ring of receive slots (freeing them), a count that only grows; the sender reads it to know which of the
 * peer's slots are free. The rendezvous area holds large messages copied once by their sender, read by their receiver
 * straight into the receive's buffer: through the peer's area mapped here where the NIC maps peer memory (shared memory
 * on one host), else by one-sided gets through the bounce (UCX between hosts). Used under the device's lock.
 */
final class DeviceWindow {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    /** The largest get of a rendezvous read over a NIC that does not map peer memory. */
    static final long BOUNCE_BYTES = 256 * 1024;

    private final Mp mp;
    private final int rank;
    private final MemorySegment memory;
    private final MpWindow window;
    private final MpRegistration reg;
    private final long sourcesAt;
    private final long bounceAt;
    private final long poolAt;
    private final long poolBytes;
    /** Each peer's whole area mapped here, or null where the NIC does not map it. */
    private final MemorySegment[] mapped;

    /** Collective: every rank of the job makes its window with the same settings. */
    DeviceWindow(Mp mp, long poolBytes) {
        this.mp = mp;
        this.rank = mp.rank();
        int size = mp.size();
        this.poolBytes = poolBytes;
        this.sourcesAt = 8L * size;
        this.bounceAt = sourcesAt + 8L * size;
        long bounce = poolBytes == 0 ? 0 : Math.min(BOUNCE_BYTES, poolBytes);
        this.poolAt = bounceAt + bounce;
        this.memory = mp.allocate(poolAt + poolBytes);
        this.window = mp.windowCreate(memory);
        this.reg = mp.register(memory);
        this.mapped = new MemorySegment[size];
        for (int p = 0; p < size; p++) {
            if (p != rank) {
                mapped[p] = window.peerMemory(p);
                if (window.size(p) != memory.byteSize()) {
                    throw new IllegalStateException("rank " + p + "'s MPJ window is " + window.size(p) + " bytes, this rank's "
                            + memory.byteSize() + ": every rank must run with the same gdasync.mpj settings");
                }
            }
        }
    }

    /** @return whether the NIC maps peer {@code p}'s memory here (shared memory on one host) */
    boolean mapsPeer(int p) {
        return mapped[p] != null;
    }

    /** @return how many of this rank's frames peer {@code p} has taken out of its slots */
    long creditsFrom(int p) {
        return (long) LONG.getAcquire(memory, 8L * p);
    }

    /**
     * The low 32 bits of credit word {@code p}, for a stream's wait (a wrap-aware GEQ on a count that only grows):
     * what a stream waits on before it rings a send into one of peer {@code p}'s slots.
     *
     * @return the word
     */
    MemoryWord creditWord(int p) {
        long low = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? 0 : 4;
        return MemoryWord.word32(memory, 8L * p + low, "MPJ credits from rank " + p);
    }

    /**
     * Tells peer {@code p} how many of its frames this rank has taken: a store into its mapped area, else a put.
     *
     * @param taken the count, larger than any told before
     * @return whether it was told; not while the queue pair to the peer holds stream sends not rung yet (a put would
     *         be refused): tell again later
     */
    boolean publishTaken(int p, long taken) {
        MemorySegment there = mapped[p];
        if (there != null) {
            LONG.setRelease(there, 8L * rank, taken);
            mp.wakePeer(p); // a sender parked waiting for credits sees them now
            return true;
        }
        if (mp.sendsAwaitStream(p)) {
            return false;
        }
        // A put that is never waited for: a later one carries a larger count, and the source only grows.
        MemorySegment src = memory.asSlice(sourcesAt + 8L * p, 8);
        LONG.setRelease(memory, sourcesAt + 8L * p, taken);
        mp.iput(src, reg, p, 8L * rank, window, PutFlags.NOWAIT);
        return true;
    }

    /** @return this rank's rendezvous area */
    MemorySegment pool() {
        return memory.asSlice(poolAt, poolBytes);
    }

    /** @return the rendezvous area's length */
    long poolBytes() {
        return poolBytes;
    }

    /**
     * @param p      a peer whose memory the NIC maps here ({@link #mapsPeer})
     * @param offset where a message is in the peer's area (as the peer said)
     * @param n      its length
     * @return the message in the peer's area, mapped here
     * @throws IllegalStateException if the range lies outside the peer's area
     */
    MemorySegment peerMessage(int p, long offset, long n) {
        requireInArea(p, offset, n);
        return mapped[p].asSlice(poolAt + offset, n);
    }

    /**
     * Reads a message from peer {@code p}'s rendezvous area into a receive's buffer.
     *
     * @param offset where it is in the peer's area (as the peer said)
     * @param target the receive's buffer, exactly the message's length
     * @throws IllegalStateException if the range lies outside the peer's area, or the job fails during the read
     * @throws dev.gdasync.libmp.MpException if a get fails
     */
    void read(int p, long offset, MemorySegment target) {
        long n = target.byteSize();
        requireInArea(p, offset, n);
        if (n == 0) {
            return;
        }
        MemorySegment there = mapped[p];
        if (there != null) {
            MemorySegment.copy(there, poolAt + offset, target, 0, n);
            return;
        }
        if (mp.sendsAwaitStream(p)) {
            // The device holds such a read back (readWaitsForStream) rather than wait here, under its lock.
            throw new IllegalStateException("a read of rank " + p + "'s message would ring the program's stream sends"
                    + " to that rank early");
        }
        long into = target.address() - memory.address();
        if (target.isNative() && into >= 0 && n <= memory.byteSize() - into) {
            // The receive's buffer is registered memory (an MPJ buffer of the area): one get straight into it.
            awaitGet(p, mp.iget(target, reg, p, poolAt + offset, window));
            return;
        }
        MemorySegment bounce = memory.asSlice(bounceAt, poolAt - bounceAt);
        for (long done = 0; done < n; ) {
            long k = Math.min(bounce.byteSize(), n - done);
            awaitGet(p, mp.iget(bounce.asSlice(0, k), reg, p, poolAt + offset + done, window));
            MemorySegment.copy(bounce, 0, target, done, k);
            done += k;
        }
    }

    /** @throws IllegalStateException if a message peer {@code p} announced lies outside its rendezvous area */
    private void requireInArea(int p, long offset, long n) {
        if (offset < 0 || offset > poolBytes || n > poolBytes - offset) {
            throw new IllegalStateException("rank " + p + " announced a message of " + n + " bytes at offset " + offset
                    + " of its rendezvous area, which is " + poolBytes + " bytes long");
        }
    }

    /**
     * @return whether a read of peer {@code p}'s message must wait: between hosts, while the queue pair to the peer
     *         holds the program's stream sends not rung yet (a get would be refused; the stream rings them as it gets
     *         there); never on one host, where a read is a copy
     */
    boolean readWaitsForStream(int p) {
        return mapped[p] == null && mp.sendsAwaitStream(p);
    }

    private void awaitGet(int p, MpRequest g) {
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.PEER_WAIT);
        while (!mp.test(g)) {
            String failed = mp.failure();
            if (failed != null) {
                throw new IllegalStateException("the job failed while reading a message of rank " + p + ": " + failed);
            }
            idler.idle();
        }
    }
}
