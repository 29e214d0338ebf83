package dev.gdasync.libmp.comm;

import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpKiExport;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The comm layer applications call (LibMP's {@code comm_library}, used by its HPGMG and CoMD ports): typed
 * messages with automatic registration, request tracking with {@link #flush()}, and the ready handshake,
 * by which a rank tells a peer that its receive is posted so the peer may send without relying on the
 * NIC's receiver-not-ready retries. The handshake runs on the CPU, on a stream, or in a kernel.
 *
 * <p>Driven by one thread at a time, like its {@link Mp}.
 */
public final class Comm implements AutoCloseable {
    private final Mp mp;
    private final ReadyTable ready;
    private final List<MpRegistration> registrations = new ArrayList<>();
    private final List<MpRequest> tracked = new ArrayList<>();

    private Comm(Mp mp) {
        this.mp = mp;
        this.ready = new ReadyTable(mp);
        mp.barrier();
    }

    /**
     * Starts the comm layer on an Mp; collective (LibMP's {@code comm_init}).
     *
     * @param mp the job's endpoint
     * @return the comm layer
     */
    public static Comm init(Mp mp) {
        return new Comm(mp);
    }

    /** @return the Mp under this comm layer */
    public Mp mp() {
        return mp;
    }

    /** @return this rank */
    public int rank() {
        return mp.rank();
    }

    /** @return the number of ranks */
    public int size() {
        return mp.size();
    }

    // ---- registration ----

    /**
     * Registers the allocation holding a buffer, once: later buffers in it reuse the registration
     * ({@code comm_register}; the comm calls do it themselves).
     *
     * @param buffer memory from {@link Mp#allocate}
     * @return the registration covering it
     */
    public MpRegistration register(MemorySegment buffer) {
        for (MpRegistration r : registrations) {
            if (r.isValid() && contains(r.segment(), buffer)) {
                return r;
            }
        }
        MpRegistration r = mp.register(mp.allocationOf(buffer));
        registrations.add(r);
        return r;
    }

    /**
     * Deregisters the allocation holding a buffer ({@code comm_deregister}).
     *
     * @param buffer memory registered through this comm layer
     */
    public void deregister(MemorySegment buffer) {
        for (MpRegistration r : registrations) {
            if (r.isValid() && contains(r.segment(), buffer)) {
                registrations.remove(r);
                mp.deregister(r);
                return;
            }
        }
        throw new IllegalArgumentException("memory at 0x" + Long.toHexString(buffer.address()) + " is not registered through this comm layer");
    }

    private static boolean contains(MemorySegment outer, MemorySegment inner) {
        long off = inner.address() - outer.address();
        return off >= 0 && off <= outer.byteSize() - inner.byteSize();
    }

    private MemorySegment typed(MemorySegment buffer, int count, Datatype type) {
        long bytes = type.sizeOf(count);
        if (bytes > buffer.byteSize()) {
            throw new IllegalArgumentException(count + " " + type + " elements need " + bytes + " bytes, the buffer has "
                    + buffer.byteSize());
        }
        return buffer.asSlice(0, bytes);
    }

    // ---- messages ----

    /**
     * Receives {@code count} elements from {@code peer} ({@code comm_irecv}); tracked until waited or flushed.
     *
     * @param buffer where they land
     * @param count  elements
     * @param type   element type
     * @param peer   the sender
     * @return the request
     */
    public MpRequest irecv(MemorySegment buffer, int count, Datatype type, int peer) {
        MemorySegment b = typed(buffer, count, type);
        return track(mp.irecv(b, peer, register(b)));
    }

    /**
     * Sends {@code count} elements to {@code peer}, rung by the CPU ({@code comm_isend}).
     *
     * @param buffer the data
     * @param count  elements
     * @param type   element type
     * @param peer   the receiver
     * @return the request
     */
    public MpRequest isend(MemorySegment buffer, int count, Datatype type, int peer) {
        MemorySegment b = typed(buffer, count, type);
        return track(mp.isend(b, peer, register(b)));
    }

    /**
     * Sends {@code count} elements to {@code peer}, rung by a stream ({@code comm_isend_on_stream}).
     *
     * @param buffer the data
     * @param count  elements
     * @param type   element type
     * @param peer   the receiver
     * @param stream the stream
     * @return the request
     */
    public MpRequest isendOnStream(MemorySegment buffer, int count, Datatype type, int peer, Stream stream) {
        MemorySegment b = typed(buffer, count, type);
        return track(mp.isendOnStream(b, peer, register(b), stream));
    }

    private MpRequest track(MpRequest r) {
        tracked.add(r);
        return r;
    }

    /**
     * Waits for a request ({@code comm_wait}).
     *
     * @param r a request of this comm layer
     */
    public void wait(MpRequest r) {
        tracked.remove(r);
        mp.wait(r);
    }

    /**
     * Waits for requests ({@code comm_wait_all}).
     *
     * @param requests requests of this comm layer
     */
    public void waitAll(List<MpRequest> requests) {
        tracked.removeAll(requests);
        mp.waitAll(requests);
    }

    /**
     * Makes a stream wait for requests ({@code comm_wait_all_on_stream}); they stay tracked for
     * {@link #flush()}.
     *
     * @param requests requests of this comm layer
     * @param stream   the stream
     */
    public void waitAllOnStream(List<MpRequest> requests, Stream stream) {
        mp.waitAllOnStream(requests, stream);
    }

    /**
     * Waits for every request still tracked ({@code comm_flush}).
     */
    public void flush() {
        List<MpRequest> all = new ArrayList<>(tracked);
        tracked.clear();
        mp.waitAll(all);
    }

    /** @return requests of this comm layer not yet waited for */
    public int outstanding() {
        return tracked.size();
    }

    /**
     * Reaps completions ({@code comm_progress}).
     *
     * @return requests completed by this call
     */
    public int progress() {
        return mp.progress();
    }

    // ---- ready handshake ----

    /**
     * Tells {@code peer} that this rank's receive from it is posted ({@code comm_send_ready}): an inline
     * put of the running count into the peer's ready table, rung by the CPU now.
     *
     * @param peer the rank that may now send
     */
    public void sendReady(int peer) {
        mp.iput(ready.nextAnnouncement(peer), ready.stagingRegistration(), peer, ready.displacementOfThisRank(),
                ready.window(), ReadyTable.flags());
    }

    /**
     * Tells {@code peer} that this rank's receive is posted, when a stream reaches this point
     * ({@code comm_send_ready_on_stream}).
     *
     * @param peer   the rank that may now send
     * @param stream the stream
     */
    public void sendReadyOnStream(int peer, Stream stream) {
        mp.iputOnStream(ready.nextAnnouncement(peer), ready.stagingRegistration(), peer, ready.displacementOfThisRank(),
                ready.window(), ReadyTable.flags(), stream);
    }

    /**
     * Waits on the CPU until {@code peer} announced its next receive ({@code comm_wait_ready}).
     *
     * @param peer the rank whose announcement this rank awaits
     */
    public void waitReady(int peer) {
        mp.wait32(ready.word(peer), ready.nextExpected(peer), WaitCondition.GEQ);
        ready.take(peer);
    }

    /**
     * Makes a stream wait until {@code peer} announced its next receive ({@code comm_wait_ready_on_stream}).
     *
     * @param peer   the rank whose announcement the stream awaits
     * @param stream the stream
     */
    public void waitReadyOnStream(int peer, Stream stream) {
        mp.wait32OnStream(ready.word(peer), ready.nextExpected(peer), WaitCondition.GEQ, stream);
        ready.take(peer);
    }

    /**
     * Takes {@code peer}'s next announcement if it arrived ({@code comm_test_ready}).
     *
     * @param peer the rank
     * @return whether the announcement arrived (and was taken)
     */
    public boolean testReady(int peer) {
        if (!ready.isReady(peer)) {
            return false;
        }
        ready.take(peer);
        return true;
    }

    // ---- KI ----

    /**
     * Exports the wait for {@code peer}'s next announcement into a KI table
     * ({@code comm_prepare_wait_ready}).
     *
     * @param export the table being built
     * @param peer   the rank whose announcement the kernel awaits
     * @return the wait entry index
     */
    public int prepareWaitReady(MpKiExport export, int peer) {
        int i = export.addWordWait(ready.word(peer), ready.nextExpected(peer), WaitCondition.GEQ);
        ready.take(peer);
        return i;
    }

    /**
     * Prepares a send for a kernel to ring and exports it ({@code comm_prepare_isend}); tracked.
     *
     * @param export the table being built
     * @param buffer the data
     * @param count  elements
     * @param type   element type
     * @param peer   the receiver
     * @return the request
     */
    public MpRequest prepareIsend(MpKiExport export, MemorySegment buffer, int count, Datatype type, int peer) {
        MemorySegment b = typed(buffer, count, type);
        MpRequest r = mp.sendPrepare(b, peer, register(b));
        export.addSend(r);
        return track(r);
    }

    /**
     * Exports the completion waits of requests for a kernel ({@code comm_prepare_wait_all}).
     *
     * @param export   the table being built
     * @param requests the requests
     */
    public void prepareWaitAll(MpKiExport export, List<MpRequest> requests) {
        for (MpRequest r : requests) {
            export.addWait(r);
        }
    }

    /** Waits for every request still tracked, then meets the other ranks; collective. */
    @Override
    public void close() {
        try {
            flush();
        } finally {
            mp.barrier();
        }
    }
}
