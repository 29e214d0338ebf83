package dev.gdasync.apps.pingpong;

import org.openucx.jucx.ucp.UcpRequest;

/**
 * {@code jucx} message rate, the reference: {@link HostRateLoop} written directly on JUCX's tagged sends and receives
 * ({@link JucxPeer}). Rank 0 sends a window with {@code sendTaggedNonBlocking}, progresses the worker until every send
 * completed, then until the acknowledgement arrived; rank 1 keeps a window of receives posted ahead and acknowledges
 * each full window.
 */
final class JucxRateLoop implements Loop {
    private final Pair pair;
    private final JucxPeer peer;
    private final int window;
    private final UcpRequest[] reqs;
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
        postWindow(bytes);
        pair.barrier();
        for (int i = 0; i < iters; i++) {
            for (int k = 0; k < window; k++) {
                peer.await(reqs[k], "receive", i);
            }
            if (i + 1 < iters) {
                postWindow(bytes);
            }
            peer.await(peer.isend(HostRateLoop.ACK_BYTES), "acknowledgement", i);
        }
        return 0;
    }

    private void postWindow(int bytes) {
        for (int k = 0; k < window; k++) {
            reqs[k] = peer.irecv(bytes);
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
