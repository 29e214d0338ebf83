package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.RecvWorkRequest;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The owner's side of a queue pair's receive queue. The peer's executor consumes entries by claiming
 * them (CAS on the claimed counter in the file) and completes each into the receive CQE with the same
 * index; this side posts entries and, when the queue pair fails, claims and flushes the rest. Entry n's
 * slot is free again once CQE n is reaped.
 */
final class ReceiveQueue {
    private static final VarHandle POSTED;

    static {
        try {
            POSTED = MethodHandles.lookup().findVarHandle(ReceiveQueue.class, "posted", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int qpn;
    private final MemorySegment seg;
    private final long ring;
    private final int depth;
    private final int mask;
    private final SwCompletionQueue cq;
    private final WorkRequestEncoder encoder;
    /** Entries posted; written by the owner's CPU thread with release stores, read by flushers. */
    @SuppressWarnings("unused")
    private long posted;

    ReceiveQueue(int qpn, MemorySegment seg, long ring, int depth, SwCompletionQueue cq, WorkRequestEncoder encoder) {
        this.qpn = qpn;
        this.seg = seg;
        this.ring = ring;
        this.depth = depth;
        this.mask = depth - 1;
        this.cq = cq;
        this.encoder = encoder;
    }

    /** @return entries posted so far */
    long posted() {
        return (long) POSTED.getAcquire(this);
    }

    /** @return free entries */
    int free() {
        return (int) (depth - (posted() - cq.polled()));
    }

    /**
     * Checks and posts a receive.
     *
     * @throws IllegalArgumentException if a buffer is refused
     * @throws QueueFullException       if every entry awaits the reaping of its CQE
     */
    void post(RecvWorkRequest wr) {
        encoder.checkRecv(wr);
        long n = posted();
        if (n - cq.polled() >= depth) {
            throw new QueueFullException("receive queue of QP " + qpn + " is full (" + depth
                    + " receives not yet reaped): poll the receive CQ first");
        }
        encoder.writeRqe(entry(n), wr, n);
        POSTED.setRelease(this, n + 1);
    }

    /**
     * Completes every posted receive nobody claimed with a flush error carrying {@code why}. With
     * {@code claimedWhy}, also completes receives that were claimed but never finished (their executor is gone:
     * the peer died, or the UCX transfer into them will not end), with that detail. Callers serialize flushes.
     *
     * @param why        the detail of unclaimed receives' flush errors
     * @param claimedWhy the detail for claimed, unfinished receives, or null to leave them
     */
    void flush(ErrorDetail why, ErrorDetail claimedWhy) {
        long n = posted();
        for (;;) {
            long c = (long) LONG.getVolatile(seg, Layouts.Qp.OFF_RQ_CLAIMED);
            if (c >= n) {
                break;
            }
            if (LONG.compareAndSet(seg, Layouts.Qp.OFF_RQ_CLAIMED, c, c + 1)) {
                complete(c, why);
            }
        }
        if (claimedWhy != null) {
            long claimed = (long) LONG.getVolatile(seg, Layouts.Qp.OFF_RQ_CLAIMED);
            for (long i = cq.polled(); i < claimed; i++) {
                if (!cq.isWritten(i)) {
                    complete(i, claimedWhy);
                }
            }
        }
    }

    private void complete(long index, ErrorDetail why) {
        cq.write(index, seg.get(JAVA_LONG, entry(index) + Layouts.Rqe.OFF_WR_ID), 0, 0, false, qpn,
                CompletionOpcode.RECV, CompletionStatus.WR_FLUSH_ERR, why, index);
    }

    private long entry(long index) {
        return ring + (index & mask) * Layouts.Rqe.SIZE;
    }
}
