package dev.gdasync.apps.pingpong;

import org.openucx.jucx.ucp.UcpRequest;

/**
 * {@code jucx} message rate, the reference: {@link HostRateLoop} written directly on JUCX's tagged sends and receives
 * ({@link JucxPeer}). Rank 0 sends a window with {@code sendTaggedNonBlocking}, progresses the worker until every send
 * completed, then until the acknowledgement arrived; rank 1 keeps two windows of receives posted and acknowledges
 * each full window before it posts the next.
 */
final class JucxRateLoop implements Loop {
    private final Pair pair;
    private final JucxPeer peer;
    private final int window;
    private final UcpRequest[] reqs;
    /** Rank 1's second window of receives: two are posted at a time. */
    private final UcpRequest[] spare;
    private boolean running;

    /**
     * @param pair   the ranks
     * @param peer   this rank's connected JUCX worker and buffers; closed with the loop
     * @param window messages per window
     */
    JucxRateLoop(Pair pair, JucxPeer peer, int window) {
        this.pair = pair;
        this.peer = peer;
        this.window = window;
        this.reqs = new UcpRequest[window];
        this.spare = new UcpRequest[window];
    }

    @Override
    public long run(int bytes, int iters, RoundTrips trips) {
        running = true;
        long elapsed = pair.initiator ? send(bytes, iters, trips) : receive(bytes, iters);
        running = false;
        return elapsed;
    }

    private long send(int bytes, int iters, RoundTrips trips) {
        UcpRequest ack = peer.irecv(HostRateLoop.ACK_BYTES);
        pair.barrier();
        long start = System.nanoTime();
        trips.begin(start);
        for (int i = 0; i < iters; i++) {
            for (int k = 0; k < window; k++) {
                reqs[k] = peer.isend(bytes);
            }
            for (int k = 0; k < window; k++) {
                peer.await(reqs[k], "send", i);
            }
            peer.await(ack, "acknowledgement", i);
            ack = i + 1 < iters ? peer.irecv(HostRateLoop.ACK_BYTES) : null;
            trips.lap();
        }
        return System.nanoTime() - start;
    }

    private long receive(int bytes, int iters) {
        UcpRequest[] current = reqs;
        UcpRequest[] next = spare;
        postWindow(current, bytes);
        if (iters > 1) {
            postWindow(next, bytes);
        }
        pair.barrier();
        for (int i = 0; i < iters; i++) {
            for (int k = 0; k < window; k++) {
                peer.await(current[k], "receive", i);
            }
            // As HostRateLoop: acknowledge at once, post the window after the next while the sender sends the next.
            UcpRequest sent = peer.isend(HostRateLoop.ACK_BYTES);
            if (i + 2 < iters) {
                postWindow(current, bytes);
            }
            UcpRequest[] t = current;
            current = next;
            next = t;
            peer.await(sent, "acknowledgement", i);
        }
        return 0;
    }

    private void postWindow(UcpRequest[] into, int bytes) {
        for (int k = 0; k < window; k++) {
            into[k] = peer.irecv(bytes);
        }
    }

    /** Closes the peer after a clean run (a collective); after a failed one leaves it to the process's exit. */
    @Override
    public void close() {
        if (!running) {
            peer.close();
        }
    }
}
