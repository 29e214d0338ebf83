package dev.gdasync.gdsync.swnic.core;

/**
 * One way a software NIC reaches its peers' queue pairs: shared memory (peers on this host) or UCX (any host).
 * A transport makes {@link Connection}s and keeps what they share (peers' mappings, a UCX worker) alive.
 */
public interface SwTransport extends AutoCloseable {

    /** @return the transport's name for messages: {@code shm}, {@code ucx} */
    String name();

    /**
     * Connects a queue pair to a peer's queue pair.
     *
     * @param qp   the local queue pair
     * @param peer the peer's endpoint descriptor
     * @return the connection
     * @throws IllegalArgumentException if the peer cannot be reached this way (the message says why)
     * @throws IllegalStateException    if the transport is closed or failed
     */
    Connection connect(SwQueuePair qp, SwEndpoint peer);

    /** @return how peers reach this transport, carried in endpoint descriptors; empty when it needs nothing */
    default byte[] address() {
        return new byte[0];
    }

    /** The agent's sweep, every liveness interval: watches what the transport's connections share. */
    default void sweep() {
    }

    /**
     * Progresses the transport once on the calling thread, a thread that polls or waits for a completion (the
     * UCX worker is progressed by those who wait on it).
     *
     * @return how much happened
     */
    default int progress() {
        return 0;
    }

    /** Closes the transport, after every connection closed. */
    @Override
    void close();
}
