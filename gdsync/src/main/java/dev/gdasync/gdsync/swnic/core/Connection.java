package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.SendWorkRequest;

/**
 * A queue pair's connection to its peer over one transport: what executes the queue pair's rung requests and
 * keeps the peer under watch. {@link SwQueuePair} drains its send queue through {@link #execute}, whose answer
 * says whether the request is done, must be retried (the peer is not ready), or is in flight and will be
 * completed later by the transport; it never asks which transport it has.
 *
 * <p>{@link #execute}, {@link #inFlight} and {@link #abandon} run under the queue pair's execution lock.
 */
public interface Connection {

    /** What became of a request handed to {@link #execute}. */
    enum Outcome {
        /** Completed, successfully or not (its CQE is written when it had to be). */
        DONE,
        /**
         * Not executed: the peer posted no receive yet or has not connected; the agent retries it, and so does a
         * thread polling the queue pair's completions where the transport allows it ({@link #retriesOnPollers}).
         */
        STALLED,
        /** Sent; the transport completes it later ({@link SwQueuePair#executedInFlight}) and drains on. */
        IN_FLIGHT
    }

    /**
     * Executes send queue entry {@code index}: checks it with the transport's {@link AccessChecker} and moves
     * its bytes. A refused or failed request is completed with an error here.
     *
     * @param index the entry's index
     * @return what became of it
     */
    Outcome execute(long index);

    /**
     * Executes a request the owner posted from the CPU straight from its work request, when it is the plain case the
     * transport handles without its send queue entry (the fast path of {@link SwQueuePair#postSend}: a small send into
     * a posted receive, a put, get or atomic on host memory):
     * checked as {@link #execute} checks it, completed with {@link SwQueuePair#completeDirectSend} or failed with
     * {@link SwQueuePair#failDirectSend}. Declining changes nothing: the caller then writes the entry and rings.
     * Runs under the lock, with every earlier request executed.
     *
     * @param index  the request's index in the send queue
     * @param wr     the checked work request
     * @param length its payload length
     * @return true if the request was executed (and completed, successfully or not); false if declined
     */
    default boolean sendDirect(long index, SendWorkRequest wr, int length) {
        return false;
    }

    /**
     * @return the index of the peer's receive that the request just executed consumed (its receive CQE's index), or
     *         -1 when it consumed none or the transport does not know it here; for events (under the lock)
     */
    default long lastPeerReceive() {
        return -1;
    }

    /**
     * The peer's registered host memory mapped into this process, for direct loads and stores
     * ({@link dev.gdasync.gdsync.nic.QueuePair#peerMemory}).
     *
     * @param rkey    the peer's remote key
     * @param address the first byte's address as the peer registered it
     * @param length  the bytes, {@code >= 1}
     * @return the bytes, or null when this transport does not map the peer's memory or the key does not cover them
     */
    default java.lang.foreign.MemorySegment peerMemory(long rkey, long address, long length) {
        return null;
    }

    /**
     * Wakes the peer's threads parked waiting for their peers, as a request completed into the peer does: for a
     * caller that stored into the peer's memory mapped by {@link #peerMemory}. Nothing where no memory is mapped.
     */
    default void wakePeer() {
    }

    /**
     * Whether a stalled head request may go through if it is tried now: the peer posted a receive since it stalled,
     * connected, or failed, or the receiver-not-ready timeout has run out (the retry then fails the request). A
     * retrier (the agent, or a thread polling the queue pair's completions) asks first, so that a send waiting for a
     * receive costs a look at the peer's receive queue rather than an execution, a count and an event per look.
     * Read without the execution lock: a stale answer costs one retry too many or one look too few, never a wrong
     * result. The default, for transports that cannot tell, is yes.
     *
     * @param now the caller's clock ({@link System#nanoTime()})
     * @return whether to retry now
     */
    default boolean stallMayClear(long now) {
        return true;
    }

    /**
     * @return whether a thread that polls the queue pair's completions may retry its stalled head request itself
     *         (shared memory: a retry is a look at the peer's receive queue and a copy); false leaves retries to the
     *         agent (UCX: a retry is a message on the wire)
     */
    default boolean retriesOnPollers() {
        return false;
    }

    /** @return whether a request is in flight: the drain waits for its answer (under the lock) */
    default boolean inFlight() {
        return false;
    }

    /** Drops the request in flight: the queue pair is failing every request (under the lock). */
    default void abandon() {
    }

    /**
     * The agent's sweep: is the peer still there and its queue pair healthy?
     *
     * @param now the agent's clock
     * @return why the peer is gone or broken, or null
     */
    ErrorDetail checkPeer(long now);

    /**
     * @param queuePairError why the queue pair failed
     * @return the detail for receives a peer's executor claimed but will never finish (their bytes come from a
     *         transfer that ended with the peer), or null to leave them to their executor
     */
    ErrorDetail unfinishedReceives(ErrorDetail queuePairError);

    /** The queue pair entered the error state: tell the peer, where the transport has to (best effort). */
    void queuePairFailed();

    /** The queue pair closed: tell the peer where the transport has to, and release what the connection holds. */
    void close();
}
