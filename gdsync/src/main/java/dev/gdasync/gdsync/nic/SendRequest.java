package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;

/**
 * A prepared send (LibGDSync's {@code gds_send_request_t}): the work request is already in the send
 * queue, and {@link #memops()} are the stores that ring its doorbell. Whoever executes those memops
 * (a stream, a kernel thread, the CPU) triggers the send.
 *
 * <p>Sends of one queue pair are rung in the order they were prepared: the doorbell record is a
 * cumulative producer index, so ringing request k also rings every request before it. Executors
 * therefore call {@link #checkPost} before taking a request and {@link #markPosted} after, and a
 * request posted out of order is refused with an exception instead of sending the wrong data.
 */
public abstract class SendRequest {

    /** Where a request is in its life. */
    public enum State {
        /** Written into the send queue; its doorbell is not yet handed to an executor. */
        PREPARED,
        /** Handed to an executor, which will ring (or has rung) its doorbell. */
        POSTED,
        /** Taken back out of the send queue before it was posted ({@link #cancel()}): it never runs. */
        CANCELLED
    }

    private final QueuePair queuePair;
    private final long sequence;
    private final MemopBatch memops;
    private final boolean signaled;
    private volatile State state = State.PREPARED;

    /**
     * @param queuePair the queue pair whose send queue holds the request
     * @param sequence  the request's position in the send queue since the queue pair was made (0, 1, ...)
     * @param memops    a WRITE32 of the doorbell record followed by a WRITE64 of the doorbell
     * @param signaled  whether it will write a completion
     * @throws IllegalArgumentException if the memops are not a doorbell-record write and a doorbell write
     */
    protected SendRequest(QueuePair queuePair, long sequence, MemopBatch memops, boolean signaled) {
        if (memops.size() != 2 || !(memops.get(0) instanceof Memop.Write32) || !(memops.get(1) instanceof Memop.Write64)) {
            throw new IllegalArgumentException("a send request rings with WRITE32(doorbell record) then WRITE64(doorbell), got " + memops);
        }
        this.queuePair = queuePair;
        this.sequence = sequence;
        this.memops = memops;
        this.signaled = signaled;
    }

    /** @return the queue pair */
    public final QueuePair queuePair() {
        return queuePair;
    }

    /** @return the request's position in its send queue */
    public final long sequence() {
        return sequence;
    }

    /** @return the memops that ring the doorbell */
    public final MemopBatch memops() {
        return memops;
    }

    /** @return whether the request writes a completion */
    public final boolean signaled() {
        return signaled;
    }

    /** @return the state */
    public final State state() {
        return state;
    }

    /** @return the doorbell record word */
    public final MemoryWord doorbellRecord() {
        return ((Memop.Write32) memops.get(0)).target();
    }

    /** @return the value the doorbell record takes when this request is rung */
    public final int doorbellRecordValue() {
        return ((Memop.Write32) memops.get(0)).value();
    }

    /** @return the doorbell word */
    public final MemoryWord doorbell() {
        return ((Memop.Write64) memops.get(1)).target();
    }

    /** @return the value written to the doorbell */
    public final long doorbellValue() {
        return ((Memop.Write64) memops.get(1)).value();
    }

    /**
     * Checks, without changing anything, that this request may be handed to an executor now.
     *
     * @param earlierInBatch requests of the same queue pair placed ahead of this one in the same batch
     * @param executor       the executor that will ring it (a stream, a kernel table)
     * @throws IllegalStateException if the request was already posted, is out of prepare order, or
     *                               its queue pair has unrung requests on another executor
     */
    public final void checkPost(int earlierInBatch, SendExecutor executor) {
        if (state != State.PREPARED) {
            throw new IllegalStateException("send request #" + sequence + " of queue pair " + queuePair.number()
                    + " was already posted");
        }
        checkPostOrder(earlierInBatch, executor);
    }

    /**
     * Records that an executor took the request; call after {@link #checkPost} succeeded.
     *
     * @param executor the executor that will ring it
     */
    public final void markPosted(SendExecutor executor) {
        state = State.POSTED;
        posted(executor);
    }

    /**
     * Takes the request back out of its send queue, as if it had never been prepared: what a caller does when the
     * executor it meant the request for refused it, so that nothing is left behind that would block the queue
     * pair's later posts. Only the last request prepared on its queue pair can be cancelled, and only before it
     * is posted; its completion wait, if one was prepared, is cancelled first ({@link WaitRequest#cancel()}).
     *
     * @throws IllegalStateException if the request was posted, cancelled, or is not the last one prepared
     */
    public final void cancel() {
        if (state != State.PREPARED) {
            throw new IllegalStateException("send request #" + sequence + " of queue pair " + queuePair.number()
                    + " is " + state + ": only a prepared request can be cancelled");
        }
        cancelPrepared();
        state = State.CANCELLED;
    }

    /**
     * Provider part of {@link #cancel()}: removes the request from the send queue.
     *
     * @throws IllegalStateException if it is not the last request prepared on its queue pair
     */
    protected abstract void cancelPrepared();

    /**
     * Tells the provider that this request's doorbell will be rung by a plain store (a GPU or a kernel
     * thread) rather than by a host executor's call, so that its agent polls eagerly until the ring.
     */
    public abstract void expectPlainStoreRing();

    /** @return whether the provider has executed the request */
    public abstract boolean isExecuted();

    /**
     * Describes the request's work request for patching by a kernel thread before it rings it.
     *
     * @return the location and patchable fields
     * @throws IllegalStateException if this request cannot be a template (more than one buffer, INLINE
     *                               payload), or the provider does not expose its work requests
     */
    public abstract WqeTemplate template();

    /**
     * Provider check of the prepare-order rule.
     *
     * @param earlierInBatch requests of the same queue pair ahead of this one in the batch
     * @param executor       the executor
     * @throws IllegalStateException if the rule would be broken
     */
    protected abstract void checkPostOrder(int earlierInBatch, SendExecutor executor);

    /**
     * Provider bookkeeping once posted.
     *
     * @param executor the executor
     */
    protected abstract void posted(SendExecutor executor);

    @Override
    public String toString() {
        return "SendRequest{qp=" + queuePair.number() + ", #" + sequence + ", " + state + (signaled ? ", signaled" : "") + "}";
    }
}
