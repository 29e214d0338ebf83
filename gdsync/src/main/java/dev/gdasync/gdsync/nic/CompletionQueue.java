package dev.gdasync.gdsync.nic;

/**
 * A completion queue: a ring of CQEs whose validity word for entry n is known in advance, so a wait
 * on it can be prepared before the completion exists.
 *
 * <p>CPU-side calls are not thread-safe: one thread at a time polls and prepares waits (verbs'
 * single-threaded resource domain, as LibGDSync creates).
 */
public interface CompletionQueue {

    /** @return a name for messages, such as "recv CQ of QP 3" */
    String name();

    /** @return the number of entries */
    int depth();

    /**
     * Reaps the next completion if it has arrived and is not held by a prepared, unreleased wait.
     *
     * @param out filled with the completion
     * @return 1 if a completion was reaped, else 0
     */
    int poll(Completion out);

    /** @return completions reaped so far */
    long polled();

    /**
     * Prepares a wait for the next CQE (LibGDSync's {@code gds_prepare_wait_cq}): the k-th wait of a
     * completion queue is for its k-th CQE. Prepare each wait before its CQE can be reaped, that is,
     * when posting the work that produces it.
     *
     * @return the wait
     * @throws IllegalStateException if {@link #poll} already reaped that CQE, or no outstanding work
     *                               will produce it
     */
    default WaitRequest prepareWait() {
        return waitFor(reserveWait());
    }

    /**
     * Reserves the next wait's CQE as {@link #prepareWait()} does, under the same order rule, without making the
     * wait object: for a caller that mostly releases the CQE to the CPU itself ({@link #releaseOnCpu(long)}) and
     * only sometimes hands the wait to a stream or kernel ({@link #waitFor(long)} then). LibMP's CPU path reserves
     * at every post, so making the object only when an executor asks for it keeps that path free of allocation.
     *
     * @return the index of the reserved CQE
     * @throws IllegalStateException as {@link #prepareWait()}
     */
    long reserveWait();

    /**
     * Makes the wait for a CQE reserved with {@link #reserveWait()}: the same wait {@link #prepareWait()} would have
     * returned at the reservation. Call it once per reservation (each call makes a new, PREPARED wait); cancelling it
     * takes the reservation back.
     *
     * @param index a reserved CQE's index
     * @return the wait
     * @throws IllegalArgumentException if {@code index} was not reserved
     */
    WaitRequest waitFor(long index);

    /**
     * Releases a reserved CQE to the CPU without waiting for it, as {@link WaitRequest#releaseOnCpu()} does for a
     * wait made from the reservation.
     *
     * @param index a reserved CQE's index
     * @throws IllegalArgumentException if {@code index} was not reserved
     */
    void releaseOnCpu(long index);

    /**
     * Declares that the CQEs reaped so far without waits were meant for the CPU, so the next wait is for
     * the next CQE not yet reaped. Use it when a completion queue that was only polled starts to be
     * waited on by a stream or kernel.
     *
     * @throws IllegalStateException if a prepared wait's CQE has not been reaped yet
     */
    void resyncWaits();
}
