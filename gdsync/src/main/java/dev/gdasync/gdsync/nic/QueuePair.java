package dev.gdasync.gdsync.nic;

import java.lang.foreign.MemorySegment;

/**
 * A reliable connected queue pair with dedicated send and receive completion queues.
 *
 * <p>Two ways to drive it. The CPU posts with {@link #postSend} and {@link #postRecv} and polls the
 * completion queues. Or the CPU prepares: {@link #prepareSend} writes the work request and returns the
 * memops that ring it, {@link #prepareWaitCq} returns the memops that wait for a completion, and a
 * stream or a kernel executes them later. CPU-side calls are not thread-safe: one thread at a time
 * drives a queue pair.
 */
public interface QueuePair extends AutoCloseable {

    /** @return the queue pair number, unique in its NIC */
    int number();

    /** @return the state */
    QpState state();

    /** @return why the queue pair entered the error state, or {@link ErrorDetail#NONE} */
    ErrorDetail errorDetail();

    /** @return the sizes it was made with */
    QueuePairConfig config();

    /** @return the descriptor a peer connects with */
    Endpoint endpoint();

    /**
     * Connects to a peer's queue pair; each side connects with the other's endpoint.
     *
     * @param remote the peer's endpoint
     * @throws NullPointerException     if the endpoint is null
     * @throws IllegalArgumentException if the endpoint is malformed or of another provider
     * @throws IllegalStateException    if already connected or closed
     */
    void connect(Endpoint remote);

    /** @return the send completion queue */
    CompletionQueue sendCq();

    /** @return the receive completion queue */
    CompletionQueue recvCq();

    /**
     * Posts a receive.
     *
     * @param wr the request; its buffers must be registered with LOCAL_WRITE
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if a buffer is not inside a registered region with LOCAL_WRITE
     * @throws QueueFullException       if the receive queue is full
     * @throws IllegalStateException    if the queue pair is closed
     */
    void postRecv(RecvWorkRequest wr);

    /**
     * Posts a send and rings its doorbell from the calling thread; the work runs at once.
     *
     * @param wr the request
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if the request is malformed or a local buffer is not registered
     * @throws QueueFullException       if the send queue, or the send completion queue for a signaled request, is full
     * @throws IllegalStateException    if not connected, or prepared sends are still unrung
     */
    void postSend(SendWorkRequest wr);

    /**
     * Writes a send into the send queue without ringing it.
     *
     * @param wr the request
     * @return the prepared send and the memops that ring it
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if the request is malformed or a local buffer is not registered
     * @throws QueueFullException       if the send queue, or the send completion queue for a signaled request, is full
     * @throws IllegalStateException    if not connected
     */
    SendRequest prepareSend(SendWorkRequest wr);

    /**
     * Prepares a wait for the next CQE of one of this queue pair's completion queues.
     *
     * @param cq {@link #sendCq()} or {@link #recvCq()}
     * @return the wait
     * @throws NullPointerException     if the completion queue is null
     * @throws IllegalArgumentException if the completion queue is not this queue pair's
     * @throws IllegalStateException    if no outstanding work will produce that CQE
     */
    WaitRequest prepareWaitCq(CompletionQueue cq);

    /**
     * Fails the queue pair now, as a fatal error of its connection would (verbs: a move to the error state): the
     * oldest outstanding send completes with {@link CompletionStatus#RETRY_EXC_ERR} and this reason, later sends
     * and the posted receives are flushed, and the peer sees the queue pair in error. Streams and kernels waiting
     * for those completions move on; CPU waits see the error. Does nothing once the queue pair failed or closed.
     *
     * @param reason why, carried by the completions
     * @throws NullPointerException if the reason is null
     */
    void abort(ErrorDetail reason);

    /**
     * @return what the queue pair has done so far (work requests, bytes, errors by status, RNR retries, doorbells,
     *         stream waits); providers that count nothing return {@link TrafficCounters#NONE}
     */
    default TrafficCounters counters() {
        return TrafficCounters.NONE;
    }

    /**
     * The peer's registered host memory as this process can load and store it directly, where the provider maps the
     * peer's memory into this process (the software NIC's shared-memory transport does; OpenSHMEM's
     * {@code shmem_ptr}). Loads and stores through it bypass the queue pair: they are ordered with its requests only
     * by the caller's own synchronisation. The segment is valid until the queue pair closes or the peer frees
     * the memory, and must not be used after that: the provider does not always notice. A later use may throw
     * {@link IllegalStateException}, or reach memory the peer no longer uses, or, where the peer has registered that
     * memory again (over shared memory the same region may be reused), the peer's new data. The callers keep it
     * safe by their own protocol: the peer frees only after a synchronisation that ends every use (Shmem's free is
     * collective, with a barrier).
     *
     * @param rkey    the peer's remote key
     * @param address the peer's address of the first byte, as work requests name it
     * @param length  the bytes wanted, {@code >= 1}
     * @return the bytes, exactly {@code length} long, or null when the provider cannot map them here (another
     *         transport, device memory, the key or range not (or no longer) registered with remote read and write
     *         access, the queue pair not connected)
     */
    default MemorySegment peerMemory(long rkey, long address, long length) {
        return null;
    }

    /**
     * After stores into the peer's memory mapped by {@link #peerMemory}: wakes the peer's threads parked waiting for
     * their peers ({@link Nic#awaitPeers}), as a request this queue pair completed into the peer would. Costs a fence
     * and a load while nobody sleeps. Nothing where the provider maps no peer memory.
     */
    default void wakePeer() {
    }

    /**
     * Whether a CPU post ({@link #postSend}) would be refused now because sends prepared on this queue pair for an
     * executor (a stream, a kernel) are not all posted and rung yet: the send queue rings in prepare order, so CPU
     * work waits until the executor rang what was prepared before it. Any thread; a hint that may change at once.
     *
     * @return whether prepared sends are still unrung
     */
    boolean holdsUnrungSends();

    /** @return free send queue entries */
    int sendQueueFree();

    /** @return free receive queue entries */
    int recvQueueFree();

    /**
     * Closes the queue pair. Its outstanding work is abandoned together with its completion queues;
     * the peer sees it closed and fails what it has outstanding towards it. Closing twice does nothing.
     */
    @Override
    void close();
}
