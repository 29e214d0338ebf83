package dev.gdasync.apps.pingpong;

import org.openucx.jucx.ucp.UcpRequest;

import java.lang.foreign.MemorySegment;

/**
 * {@code jucx}, the outside reference for the UCX transport: the same ping-pong as {@link HostLoop}, written
 * directly on JUCX's tagged send and receive ({@link JucxPeer}), without libmp or the software NIC. Rank 0
 * sends and waits for the reply; rank 1 waits for the message and replies; every wait busy-polls the worker.
 *
 * <p>As in {@code host}, each rank keeps one receive posted beyond the one it waits for, so the next message
 * finds its receive posted (UCX matches posted receives of one tag in order), and posting it is off the
 * critical path. With {@code --validate} the pattern is written before each send and checked after each
 * receive; with {@code --compute-us} the compute task runs after each receive.
 */
final class JucxLoop implements Loop {
    private final Pair pair;
    private final JucxPeer peer;
    private final boolean validate;
    private final Compute compute;
    private final String where;
    private boolean running;

    /**
     * @param pair    the ranks
     * @param peer    this rank's connected JUCX worker and buffers; closed with the loop
     * @param options validation and compute
     */
    JucxLoop(Pair pair, JucxPeer peer, PingPongOptions options) {
        this.pair = pair;
        this.peer = peer;
        this.validate = options.validate();
        this.compute = new Compute(options.computeMicros());
        this.where = PingPongOptions.Mode.JUCX.label() + " mode, rank " + pair.rank;
    }

    @Override
    public long run(int bytes, int iters, RoundTrips trips) {
        running = true;
        long elapsed = pair.initiator ? initiate(bytes, iters, trips) : respond(bytes, iters);
        running = false;
        return elapsed;
    }

    private long initiate(int bytes, int iters, RoundTrips trips) {
        MemorySegment out = peer.send(bytes);
        MemorySegment in = peer.recv(bytes);
        UcpRequest recv = peer.irecv(bytes);
        pair.barrier(); // the responder's first receives are posted
        long start = System.nanoTime();
        trips.begin(start);
        for (int i = 0; i < iters; i++) {
            produce(out, i);
            UcpRequest send = peer.isend(bytes);
            // While this message travels: post the next reply's receive.
            UcpRequest next = i + 1 < iters ? peer.irecv(bytes) : null;
            peer.await(send, "send", i);
            peer.await(recv, "receive", i);
            consume(in, i, recv.getRecvSize());
            trips.lap();
            recv = next;
        }
        return System.nanoTime() - start;
    }

    private long respond(int bytes, int iters) {
        MemorySegment out = peer.send(bytes);
        MemorySegment in = peer.recv(bytes);
        UcpRequest recv = peer.irecv(bytes);
        UcpRequest next = iters > 1 ? peer.irecv(bytes) : null;
        pair.barrier();
        for (int i = 0; i < iters; i++) {
            peer.await(recv, "receive", i);
            consume(in, i, recv.getRecvSize());
            produce(out, i);
            UcpRequest send = peer.isend(bytes);
            recv = next;
            next = i + 2 < iters ? peer.irecv(bytes) : null;
            peer.await(send, "send", i);
        }
        return 0;
    }

    private void produce(MemorySegment out, int i) {
        if (validate) {
            Pattern.fill(out, i, pair.rank);
        }
    }

    private void consume(MemorySegment in, int i, long received) {
        if (validate) {
            Pattern.check(in, i, pair.peer, received, where);
        }
        if (compute.isEnabled()) {
            compute.run();
        }
    }

    /**
     * Closes the peer after a clean run (a collective, see {@link JucxPeer#close()}); after a failed one leaves
     * it, with its requests in flight, to the process's exit.
     */
    @Override
    public void close() {
        if (!running) {
            peer.close();
        }
    }
}
