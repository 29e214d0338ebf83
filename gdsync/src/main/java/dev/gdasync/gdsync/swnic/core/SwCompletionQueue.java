package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memop.WaitTally;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.TrafficMeter;
import dev.gdasync.gdsync.nic.WaitOrder;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.trace.CompletionReapedEvent;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongSupplier;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;

/**
 * One of a queue pair's two dedicated completion queues, in the queue pair's file.
 *
 * <p>Entry n lives in slot {@code n & (depth - 1)}; its validity word becomes n + 1 when it is
 * written. Next to the ring is a release word per slot: a prepared wait writes n + 1 there after its
 * executor passed the wait, and until then {@link #poll} keeps the entry from the CPU (LibGDSync's
 * peek). The CPU frees a slot by polling it.
 *
 * <p>A poll counts the receives it reaps in the queue pair's {@link TrafficMeter} and, with the flight recorder on,
 * records every CQE it reaps; the waits it prepares are counted in the meter's tally for this queue.
 */
final class SwCompletionQueue implements CompletionQueue {
    private static final VarHandle POLLED;

    static {
        try {
            POLLED = MethodHandles.lookup().findVarHandle(SwCompletionQueue.class, "polled", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    private final MemorySegment seg;
    private final long ring;
    private final long release;
    private final int depth;
    private final int mask;
    /** The order rule of prepared waits (CPU thread only). */
    private final WaitOrder order;
    private final MemoryWord[] validityWords;
    private final MemoryWord[] releaseWords;
    /** Entries reaped by the CPU; written by the polling thread, read by executors. */
    @SuppressWarnings("unused")
    private volatile long polled;

    private final Runnable onEmpty;
    private final WaitProgress waitProgress;
    private final Identity identity;
    private final WaitTally tally;

    /**
     * Whose completion queue this is, for counts and events.
     *
     * @param qpn     the queue pair's number
     * @param token   its identity across processes
     * @param receive whether this is the receive completion queue (its polls count receives)
     * @param meter   the queue pair's counts
     */
    record Identity(int qpn, long token, boolean receive, TrafficMeter meter) {
    }
    /**
     * Whether the last poll found an entry (CPU thread only). The empty poll that ends a drain loop does not run
     * {@link #onEmpty}: the thread is about to act on what it found, and a transport progressed there would spend
     * that time (and send what it could have carried on the thread's next request).
     */
    private boolean lastFound;

    /**
     * @param name         for messages
     * @param seg          the queue pair file
     * @param ring         offset of the CQE ring
     * @param release      offset of the release words
     * @param depth        entries
     * @param expected     how many CQEs outstanding work will have produced once it completes
     * @param expectedWhat what {@code expected} counts, for messages
     * @param onEmpty      run by a poll that finds no entry (the NIC progresses its UCX transport there)
     * @param waitProgress what a host thread waiting for one of its CQEs runs between looks
     * @param identity     whose it is, for counts and events
     */
    SwCompletionQueue(String name, MemorySegment seg, long ring, long release, int depth, LongSupplier expected,
                       String expectedWhat, Runnable onEmpty, WaitProgress waitProgress, Identity identity) {
        this.name = name;
        this.identity = identity;
        this.tally = identity.receive() ? identity.meter().recvWaits() : identity.meter().sendWaits();
        this.onEmpty = onEmpty;
        this.waitProgress = waitProgress;
        this.seg = seg;
        this.ring = ring;
        this.release = release;
        this.depth = depth;
        this.mask = depth - 1;
        this.order = new WaitOrder(name, this::polled, expected, expectedWhat);
        this.validityWords = new MemoryWord[depth];
        this.releaseWords = new MemoryWord[depth];
        for (int i = 0; i < depth; i++) {
            validityWords[i] = MemoryWord.word32(seg, slot(i) + Layouts.Cqe.OFF_VALIDITY, "validity word of " + name + " slot " + i);
            releaseWords[i] = MemoryWord.word32(seg, release + i * 4L, "release word of " + name + " slot " + i);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int depth() {
        return depth;
    }

    @Override
    public long polled() {
        return (long) POLLED.getAcquire(this);
    }

    @Override
    public int poll(Completion out) {
        long index = (long) POLLED.getOpaque(this);
        int s = (int) (index & mask);
        long off = slot(s);
        if (!Cqes.isWritten(seg, off, index)) {
            if (lastFound) {
                lastFound = false;
                return 0;
            }
            onEmpty.run();
            if (!Cqes.isWritten(seg, off, index)) {
                return 0; // else the transport just wrote it: take it now rather than at the next poll
            }
        }
        if (index < order.prepared() && (int) INT.getAcquire(seg, release + s * 4L) != (int) (index + 1)) {
            return 0; // a prepared wait has not released this entry yet
        }
        Cqes.read(seg, off, index, out);
        POLLED.setRelease(this, index + 1);
        lastFound = true;
        if (identity.receive()) {
            identity.meter().received(out.byteLength(), out.status());
        }
        CompletionReapedEvent event = new CompletionReapedEvent();
        if (event.shouldCommit()) {
            reaped(event, index, out);
        }
        return 1;
    }

    /** Fills and commits the event, off {@link #poll}: its bytecode would count against the JIT's inlining budget. */
    private void reaped(CompletionReapedEvent event, long index, Completion out) {
        event.provider = "swnic";
        event.queuePair = identity.qpn();
        event.queuePairToken = identity.token();
        event.queue = identity.receive() ? "recv" : "send";
        event.index = index;
        event.opcode = out.opcode().name();
        event.status = out.status().name();
        event.bytes = out.byteLength();
        event.wrId = out.wrId();
        event.commit();
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
        releaseWords[(int) (index & mask)].set32((int) (index + 1), true);
    }

    private WaitRequest newWait(long index) {
        int s = (int) (index & mask);
        int value = (int) (index + 1);
        return new SwWaitRequest(this, index, validityWords[s], value, releaseWords[s], value, waitProgress, tally);
    }

    @Override
    public void resyncWaits() {
        order.resync();
    }

    /** @return the offset of slot {@code s} */
    long slot(int s) {
        return ring + (long) s * Layouts.Cqe.SIZE;
    }

    /** @return the offset of the slot of entry {@code index} */
    long slotOf(long index) {
        return slot((int) (index & mask));
    }

    MemorySegment segment() {
        return seg;
    }

    /** Writes a local CQE (executor or flusher of the owning queue pair). */
    void write(long index, long wrId, int byteLength, int imm, boolean hasImm, int qpn, CompletionOpcode opcode,
               CompletionStatus status, ErrorDetail detail, long wqeIndex) {
        Cqes.write(seg, slotOf(index), index, wrId, byteLength, imm, hasImm, qpn, opcode, status, detail, wqeIndex);
    }

    boolean isWritten(long index) {
        return Cqes.isWritten(seg, slotOf(index), index);
    }

    /** Takes back the wait for CQE {@code index}, the last one prepared; CPU thread. */
    private void cancelWait(long index) {
        order.cancel(index);
    }

    /** A prepared wait of this completion queue. */
    private static final class SwWaitRequest extends WaitRequest {
        private final SwCompletionQueue cq;
        private final WaitTally tally;

        SwWaitRequest(SwCompletionQueue cq, long index, MemoryWord word, int value, MemoryWord releaseWord, int releaseValue,
                       WaitProgress progress, WaitTally tally) {
            super(cq, index, word, value, releaseWord, releaseValue, progress);
            this.cq = cq;
            this.tally = tally;
        }

        @Override
        protected WaitTally tally() {
            return tally;
        }

        @Override
        protected void cancelPrepared() {
            cq.cancelWait(index());
        }
    }
}
