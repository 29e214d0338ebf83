package dev.gdasync.libmp;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * How an Mp's calls start a request on a peer link, shared by the two-sided core ({@code Mp.isendv},
 * {@code Mp.irecvv}), the stream and prepared forms ({@link StreamForms}) and the one-sided operations
 * ({@link OneSidedOps}): the peer's link (refused once closed or failed), the buffers' checks, a request from the
 * pool, the work request in the link's reusable {@code sendWr}, a prepared send, and the retry of a full queue. One
 * per Mp, on its driving thread; nothing here allocates on the way of a send that the queue takes.
 */
final class RequestPosting {
    private final MpContext context;
    private final PeerLink[] links;
    private final RequestPool pool;
    private final long waitTimeoutNanos;
    /** The Mp's {@code progress()}: reaps every completion released to the CPU. */
    private final WaitProgress reap;

    /**
     * @param context          the Mp's context
     * @param links            its peer links (shared, not copied)
     * @param pool             its request pool
     * @param waitTimeoutNanos how long a full queue is retried
     * @param reap             what reaps the Mp's completions (its {@code progress()}), when the pool or a queue is full
     */
    RequestPosting(MpContext context, PeerLink[] links, RequestPool pool, long waitTimeoutNanos, WaitProgress reap) {
        this.context = context;
        this.links = links;
        this.pool = pool;
        this.waitTimeoutNanos = waitTimeoutNanos;
        this.reap = reap;
    }

    /**
     * @return the link to a peer
     * @throws IllegalStateException    if the Mp is closed
     * @throws MpException              if the job failed
     * @throws IllegalArgumentException if the peer is not another rank of the job
     */
    PeerLink link(int peer) {
        context.requireOpen();
        String failed = context.jobFailure();
        if (failed != null) {
            throw new MpException("rank " + context.rank() + " cannot start an operation with rank " + peer
                    + ": the job failed: " + failed, null, ErrorDetail.JOB_FAILED);
        }
        if (peer < 0 || peer >= links.length) {
            throw new IllegalArgumentException("unknown peer " + peer + ": ranks are 0.." + (links.length - 1));
        }
        PeerLink l = links[peer];
        if (l == null) {
            throw new IllegalArgumentException("rank " + peer + " is this rank: Mp connects only to other ranks");
        }
        return l;
    }

    /**
     * @return the message's length: the buffers' bytes
     * @throws IllegalArgumentException if the registration is another Mp's or deregistered, there are not 1 to 8
     *                                  buffers, one is outside the registration, or they hold more than 2 GiB - 1
     */
    long checkBuffers(List<MemorySegment> bufs, MpRegistration reg) {
        Objects.requireNonNull(reg, "registration").checkOwner(context);
        if (!reg.isValid()) {
            throw new IllegalArgumentException(reg + " is deregistered");
        }
        if (bufs.isEmpty() || bufs.size() > 8) {
            throw new IllegalArgumentException("a message has 1 to 8 buffers, got " + bufs.size());
        }
        long total = 0;
        for (MemorySegment b : bufs) {
            if (!reg.contains(b)) {
                throw new IllegalArgumentException("buffer [0x" + Long.toHexString(b.address()) + ", +" + b.byteSize()
                        + ") is not inside " + reg + ": register it first");
            }
            total += b.byteSize();
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a message carries at most " + Integer.MAX_VALUE + " bytes, got " + total);
        }
        return total;
    }

    /** Takes a request from the pool; when it is empty, reaps once first (LibMP progresses then, too). */
    MpRequest newRequest(MpRequest.Kind kind, int peer, long bytes, boolean nowait) {
        if (pool.isEmpty()) {
            reap.progress();
        }
        return pool.take(kind, peer, bytes, nowait);
    }

    /** Gives back a request whose work request was refused, so the refusal leaves nothing behind. */
    void cancel(MpRequest r) {
        pool.cancel(r);
    }

    /**
     * Posts a send work request on the link's queue pair now, retrying a full queue slowly; a refusal cancels the
     * request, so it leaves nothing behind.
     */
    void postSend(PeerLink l, SendWorkRequest wr, MpRequest r) {
        try {
            try {
                l.qp.postSend(wr);
            } catch (QueueFullException full) {
                retryFullSlowly(() -> l.qp.postSend(wr));
            }
        } catch (RuntimeException e) {
            pool.cancel(r);
            throw e;
        }
    }

    /** Writes a request's work request into the link's reusable {@code sendWr}. */
    static SendWorkRequest sendWr(PeerLink l, MpRequest r, Opcode op, int flags, List<MemorySegment> bufs,
                                  MpRegistration reg) {
        SendWorkRequest wr = l.sendWr.reset().opcode(op).flags(flags).wrId(r.id());
        for (MemorySegment b : bufs) {
            wr.sge(b.address(), (int) b.byteSize(), reg.region.lkey());
        }
        return wr;
    }

    /** Writes a request's work request (in the link's {@code sendWr}) into the send queue; cancelled if that fails. */
    void prepare(PeerLink l, MpRequest r) {
        SendWorkRequest wr = l.sendWr;
        SendRequest send;
        try {
            try {
                send = l.qp.prepareSend(wr);
            } catch (QueueFullException full) {
                send = retryFullSlowly(() -> l.qp.prepareSend(wr));
            }
        } catch (RuntimeException e) {
            pool.cancel(r);
            throw e;
        }
        if (r.isNowait()) {
            r.prepared(send, null);
            l.awaitExecution(r);
        } else {
            r.prepared(send, l.qp.prepareWaitCq(l.qp.sendCq()));
            l.awaitSend(r);
        }
    }

    /** Takes back a request this call just prepared: its wait, its work request, its place in the link, its slot. */
    void takeBack(MpRequest r) {
        if (r.waitRequest() != null) {
            r.waitRequest().cancel();
        }
        r.sendRequest().cancel();
        links[r.peer()].forget(r);
        pool.cancel(r);
    }

    /**
     * Retries an operation the NIC refused for a full queue after reaping, as LibMP does, until the wait timeout.
     * Callers try the operation once themselves first: the lambda is allocated only when a queue was full.
     */
    <T> T retryFullSlowly(Supplier<T> op) {
        long deadline = System.nanoTime() + waitTimeoutNanos;
        BackoffIdler full = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
        for (;;) {
            try {
                return op.get();
            } catch (QueueFullException e) {
                if (reap.progress() == 0) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    full.idle();
                }
            }
        }
    }

    /** {@link #retryFullSlowly(Supplier)} for an operation that returns nothing. */
    void retryFullSlowly(Runnable op) {
        retryFullSlowly(() -> {
            op.run();
            return null;
        });
    }
}
