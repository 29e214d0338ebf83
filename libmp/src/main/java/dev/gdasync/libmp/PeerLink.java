package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;

import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * An {@link Mp}'s connection to one peer: the queue pair and the requests awaiting its completions,
 * each list in the order its completions arrive (LibMP matches per peer in FIFO order, as RC does). It
 * reaps their completions and gives the slots of executed NOWAIT puts back to the pool itself.
 */
final class PeerLink {
    final int rank;
    final QueuePair qp;
    private final RequestPool pool;
    /** Signaled sends, puts and gets, in send CQE order. */
    private final RequestFifo sends = new RequestFifo();
    /** Receives, in receive CQE order. */
    private final RequestFifo recvs = new RequestFifo();
    /** NOWAIT puts, in send queue order; they retire when the NIC has executed them. */
    private final ArrayDeque<MpRequest> unsignaled = new ArrayDeque<>();
    final SendWorkRequest sendWr = new SendWorkRequest();
    final RecvWorkRequest recvWr = new RecvWorkRequest();

    PeerLink(int rank, QueuePair qp, RequestPool pool) {
        this.rank = rank;
        this.qp = qp;
        this.pool = pool;
    }

    /** Awaits a posted receive's CQE. */
    void awaitRecv(MpRequest r) {
        recvs.addLast(r);
    }

    /** Awaits a signaled send's, put's or get's CQE. */
    void awaitSend(MpRequest r) {
        sends.addLast(r);
    }

    /** Awaits the execution of a NOWAIT put, which writes no CQE unless it fails. */
    void awaitExecution(MpRequest r) {
        unsignaled.addLast(r);
    }

    /**
     * Forgets a request taken back before it was posted: the last one added to its list.
     *
     * @param r the request
     */
    void forget(MpRequest r) {
        if (r.kind() == MpRequest.Kind.RECV) {
            recvs.removeLast(r);
        } else if (r.isNowait()) {
            if (unsignaled.peekLast() != r) {
                throw new IllegalStateException(r.describe() + " is not the last NOWAIT put of rank " + rank);
            }
            unsignaled.pollLast();
        } else {
            sends.removeLast(r);
        }
    }

    /**
     * Releases to the CPU the CQEs of a request and of every request ahead of it that nobody waits on on
     * a stream (see {@link RequestFifo#releaseOnCpuThrough}); nothing for a request already complete.
     *
     * @param r a request of this link being waited on by the CPU
     */
    void releaseOnCpu(MpRequest r) {
        RequestState s = r.state();
        if (s == RequestState.PENDING_NOWAIT || s == RequestState.PENDING) {
            (r.kind() == MpRequest.Kind.RECV ? recvs : sends).releaseOnCpuThrough(r);
        }
    }

    /**
     * Reaps every completion available and retires executed NOWAIT puts into the pool.
     *
     * @param c a completion to fill
     * @return the number of requests that completed
     */
    int progress(Completion c) {
        int n = reap(qp.sendCq(), sends, c);
        n += reap(qp.recvCq(), recvs, c);
        while (!unsignaled.isEmpty() && executed(unsignaled.peekFirst())) {
            pool.retire(unsignaled.pollFirst());
        }
        return n;
    }

    /** A NOWAIT put the CPU posted at once has no prepared send: it was handed to the NIC when it was posted. */
    private static boolean executed(MpRequest r) {
        return r.sendRequest() == null || r.sendRequest().isExecuted();
    }

    private int reap(CompletionQueue cq, RequestFifo fifo, Completion c) {
        int n = 0;
        while (cq.poll(c) == 1) {
            MpRequest head = fifo.peekFirst();
            if (head != null && head.id() == c.wrId()) {
                fifo.pollFirst();
                head.complete(c);
                n++;
            } else {
                // An unsignaled NOWAIT put that failed writes an error CQE of its own; anything else
                // would be a CQE nobody posted, which the NIC never writes.
                failUnsignaled(c);
            }
        }
        return n;
    }

    private void failUnsignaled(Completion c) {
        for (Iterator<MpRequest> it = unsignaled.iterator(); it.hasNext(); ) {
            MpRequest r = it.next();
            if (r.id() == c.wrId()) {
                r.failed(c);
                return;
            }
        }
        throw new IllegalStateException("completion " + c + " from rank " + rank + " matches no request");
    }
}
