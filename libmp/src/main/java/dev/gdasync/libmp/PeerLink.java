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
 * each list in the order its completions arrive (LibMP matches per peer in FIFO order, as RC does).
 */
final class PeerLink {
    final int rank;
    final QueuePair qp;
    /** Signaled sends, puts and gets, in send CQE order. */
    final RequestFifo sends = new RequestFifo();
    /** Receives, in receive CQE order. */
    final RequestFifo recvs = new RequestFifo();
    /** NOWAIT puts, in send queue order; they retire when the NIC has executed them. */
    final ArrayDeque<MpRequest> unsignaled = new ArrayDeque<>();
    final SendWorkRequest sendWr = new SendWorkRequest();
    final RecvWorkRequest recvWr = new RecvWorkRequest();

    PeerLink(int rank, QueuePair qp) {
        this.rank = rank;
        this.qp = qp;
    }

    /** @return the requests of a kind's completion queue */
    RequestFifo fifo(MpRequest r) {
        return r.kind == MpRequest.Kind.RECV ? recvs : sends;
    }

    /**
     * Reaps every completion available and retires executed NOWAIT puts.
     *
     * @param c   a completion to fill
     * @param mp  the owner, which releases retired NOWAIT puts' pool slots
     * @return the number of requests that completed
     */
    int progress(Completion c, Mp mp) {
        int n = reap(qp.sendCq(), sends, c);
        n += reap(qp.recvCq(), recvs, c);
        while (!unsignaled.isEmpty() && unsignaled.peekFirst().send.isExecuted()) {
            mp.retire(unsignaled.pollFirst());
        }
        return n;
    }

    private int reap(CompletionQueue cq, RequestFifo fifo, Completion c) {
        int n = 0;
        while (cq.poll(c) == 1) {
            MpRequest head = fifo.peekFirst();
            if (head != null && head.id == c.wrId()) {
                fifo.pollFirst();
                complete(head, c);
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
            if (r.id == c.wrId()) {
                r.status = c.status();
                r.detail = c.detail();
                return;
            }
        }
        throw new IllegalStateException("completion " + c + " from rank " + rank + " matches no request");
    }

    static void complete(MpRequest r, Completion c) {
        r.status = c.status();
        r.detail = c.detail();
        r.received = c.byteLength();
        r.state = RequestState.COMPLETE;
    }
}
