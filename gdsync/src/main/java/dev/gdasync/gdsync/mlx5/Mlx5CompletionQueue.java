package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memop.WaitTally;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.WaitOrder;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.trace.CompletionReapedEvent;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;

import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE32;

/**
 * One of a queue pair's two completion queues in the mlx5 format: a ring of 64-byte CQEs the device writes, with the
 * owner bit flipping every pass, and the doorbell record where the CPU publishes its consumer index.
 *
 * <p>CQE n lives in entry {@code n & (count - 1)}. A prepared wait waits on the entry's last dword
 * ({@link CqWaitMode}); next to the ring is a release word per entry, which the wait's executor writes once it passed
 * the wait, and until then {@link #poll} keeps the CQE from the CPU (LibGDSync's peek). A consumed entry is given
 * back with the invalid opcode and the consumer index is published, so the device may write the entry again. The
 * send queue's own CQEs (sends the provider signaled so that unsignaled ones are known complete) are consumed
 * silently: the k-th CQE the CPU is given, and the k-th wait, skip them.
 */
final class Mlx5CompletionQueue implements CompletionQueue {
    private static final VarHandle POLLED;

    static {
        try {
            POLLED = MethodHandles.lookup().findVarHandle(Mlx5CompletionQueue.class, "polled", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Turns a CQE into a completion: the owning queue pair, which knows its requests. */
    interface CqeReader {
        /**
         * @param cq  the CQ buffer
         * @param off a written CQE's offset
         * @return whether the CQE is the provider's own (a send it signaled so that unsignaled ones before it are known
         *         complete), which no wait names and the CPU consumes silently
         */
        boolean isOwn(MemorySegment cq, long off);

        /**
         * Consumes a CQE: fills the completion, or takes note of one of the provider's own.
         *
         * @param cq    the CQ buffer
         * @param off   the CQE's offset
         * @param index the CQE's index among those the CPU is given
         * @param out   the completion to fill
         */
        void read(MemorySegment cq, long off, long index, Completion out);
    }

    private final String name;
    private final Mlx5CqQueues queues;
    private final MemorySegment buffer;
    private final int count;
    private final int mask;
    private final MemorySegment dbrec;
    private final Region releaseRegion;
    private final MemoryWord[] lastDwords;
    private final MemoryWord[] releaseWords;
    private final CqWaitMode waitMode;
    private final WaitProgress progress;
    /** The order rule of prepared waits (CPU thread only). */
    private final WaitOrder order;
    private CqeReader reader;
    /** What a wait by an executor that cannot progress the device announces (the device's expectCompletion). */
    private Runnable expectExternalWait = () -> { };
    /** Where the CQE the CPU is given k-th lies in the ring (the provider's own CQEs lie between). */
    private LongUnaryOperator ringIndexOf = LongUnaryOperator.identity();
    /** CQEs reaped by the CPU, the provider's own not counted; written by the polling thread, read by executors. */
    @SuppressWarnings("unused")
    private volatile long polled;
    /** CQEs consumed from the ring, the provider's own counted (polling thread only). */
    private long consumed;
    /** Whether the last poll found a CQE (CPU thread only): the empty poll ending a drain skips the progress call. */
    private boolean lastFound;
    /** The queue pair's number, for events. */
    private int qpn;
    /** Whether this is the receive completion queue, for events. */
    private boolean receive;
    /** Where host executors count the waits this queue prepares. */
    private WaitTally tally;

    /**
     * @param name          for messages
     * @param queues        where the CQ lives
     * @param releaseRegion host memory for one release word per entry, reachable by every executor
     * @param waitMode      how prepared waits test CQEs
     * @param progress      what an empty poll and a waiting host thread run (the software device), or null
     * @param expected      how many CQEs outstanding work will have produced once it completes
     * @param expectedWhat  what {@code expected} counts, for messages
     */
    Mlx5CompletionQueue(String name, Mlx5CqQueues queues, Region releaseRegion, CqWaitMode waitMode, WaitProgress progress,
                        LongSupplier expected, String expectedWhat) {
        if (queues.cqeSize() != Mlx5Cqe.SIZE) {
            throw new IllegalArgumentException(name + ": CQEs of " + queues.cqeSize() + " bytes; the provider reads 64-byte CQEs"
                    + " (set MLX5_CQE_SIZE=64)");
        }
        this.name = name;
        this.queues = queues;
        this.buffer = queues.buffer();
        this.count = queues.cqeCount();
        this.mask = count - 1;
        this.dbrec = queues.dbrec();
        this.releaseRegion = releaseRegion;
        this.waitMode = waitMode;
        this.progress = progress;
        this.order = new WaitOrder(name, this::polled, expected, expectedWhat);
        this.lastDwords = new MemoryWord[count];
        this.releaseWords = new MemoryWord[count];
        MemorySegment release = releaseRegion.segment();
        for (int i = 0; i < count; i++) {
            lastDwords[i] = MemoryWord.word32(buffer, (long) i * Mlx5Cqe.SIZE + Mlx5Layouts.CQE_LAST_DWORD,
                    "last dword of CQE slot " + i + " of " + name);
            releaseWords[i] = MemoryWord.word32(release, i * 4L, "release word of CQE slot " + i + " of " + name);
        }
    }

    /** Names the queue for events, and where its waits are counted. */
    void identify(int queuePair, boolean isReceive, WaitTally waits) {
        this.qpn = queuePair;
        this.receive = isReceive;
        this.tally = waits;
    }

    void reader(CqeReader reader) {
        this.reader = reader;
    }

    void expectExternalWait(Runnable hook) {
        this.expectExternalWait = hook;
    }

    void ringIndexOf(LongUnaryOperator ringIndexOf) {
        this.ringIndexOf = ringIndexOf;
    }

    /** @return CQEs consumed from the ring, the provider's own included */
    long consumed() {
        return consumed;
    }

    Mlx5CqQueues queues() {
        return queues;
    }

    Region releaseRegion() {
        return releaseRegion;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int depth() {
        return count;
    }

    @Override
    public long polled() {
        return (long) POLLED.getAcquire(this);
    }

    @Override
    public int poll(Completion out) {
        for (;;) {
            long ring = consumed;
            long off = (ring & mask) * Mlx5Cqe.SIZE;
            if (!Mlx5Cqe.isWritten(buffer, off, ring, count)) {
                if (lastFound || progress == null) {
                    lastFound = false;
                    return 0;
                }
                progress.progress();
                if (!Mlx5Cqe.isWritten(buffer, off, ring, count)) {
                    return 0;
                }
            }
            VarHandle.acquireFence(); // the CQE's other fields, written before its op_own
            if (reader.isOwn(buffer, off)) {
                reader.read(buffer, off, -1, out);
                give(off, ring);
                continue;
            }
            long index = (long) POLLED.getOpaque(this);
            if (index < order.prepared() && releaseWords[(int) (ring & mask)].getAcquire32() != (int) (ring + 1)) {
                return 0; // a prepared wait has not released this CQE yet
            }
            reader.read(buffer, off, index, out);
            give(off, ring);
            POLLED.setRelease(this, index + 1);
            lastFound = true;
            CompletionReapedEvent event = new CompletionReapedEvent();
            if (event.shouldCommit()) {
                event.provider = "mlx5";
                event.queuePair = qpn;
                event.queue = receive ? "recv" : "send";
                event.index = index;
                event.opcode = out.opcode().name();
                event.status = out.status().name();
                event.bytes = out.byteLength();
                event.wrId = out.wrId();
                event.commit();
            }
            return 1;
        }
    }

    /** Gives entry {@code ring} back to the device: invalid opcode, consumer index published. */
    private void give(long off, long ring) {
        Mlx5Cqe.invalidate(buffer, off);
        consumed = ring + 1;
        // The consumer index, 24 bits big-endian: the device may now write this entry again.
        VarHandle.releaseFence();
        dbrec.set(BE32, (long) Mlx5Layouts.CQ_SET_CI * 4, (int) ((ring + 1) & 0xffffff));
    }

    @Override
    public long reserveWait() {
        return order.next();
    }

    @Override
    public WaitRequest waitFor(long index) {
        order.requireReserved(index);
        return newWait(index);
    }

    @Override
    public void releaseOnCpu(long index) {
        order.requireReserved(index);
        long ring = ringIndexOf.applyAsLong(index);
        releaseWords[(int) (ring & mask)].set32((int) (ring + 1), true);
    }

    private WaitRequest newWait(long next) {
        long ring = ringIndexOf.applyAsLong(next);
        int s = (int) (ring & mask);
        int release = (int) (ring + 1);
        return switch (waitMode) {
            case OWNER -> Mlx5Cqe.ownerOf(ring, count) == 1
                    ? new Mlx5WaitRequest(this, next, lastDwords[s], Mlx5Cqe.OWNER_BIT_IN_LAST_DWORD, WaitCondition.AND,
                    releaseWords[s], release, progress)
                    : new Mlx5WaitRequest(this, next, lastDwords[s], ~Mlx5Cqe.OWNER_BIT_IN_LAST_DWORD, WaitCondition.NOR,
                    releaseWords[s], release, progress);
            case GEQ -> new Mlx5WaitRequest(this, next, lastDwords[s], 0, WaitCondition.GEQ, releaseWords[s], release, progress);
        };
    }

    @Override
    public void resyncWaits() {
        order.resync();
    }

    /** Takes back the wait for CQE {@code index}, the last one prepared; CPU thread. */
    private void cancelWait(long index) {
        order.cancel(index);
    }

    @Override
    public String toString() {
        return "Mlx5CompletionQueue{" + name + ", " + count + " CQEs, polled " + polled() + "}";
    }

    /** A prepared wait of this completion queue. */
    private static final class Mlx5WaitRequest extends WaitRequest {
        private final Mlx5CompletionQueue cq;

        Mlx5WaitRequest(Mlx5CompletionQueue cq, long index, MemoryWord word, int value, WaitCondition condition,
                        MemoryWord releaseWord, int releaseValue, WaitProgress progress) {
            super(cq, index, word, value, condition, releaseWord, releaseValue, progress);
            this.cq = cq;
        }

        @Override
        protected void cancelPrepared() {
            cq.cancelWait(index());
        }

        @Override
        public void expectExternalWait() {
            cq.expectExternalWait.run();
        }

        @Override
        protected WaitTally tally() {
            return cq.tally;
        }
    }
}
