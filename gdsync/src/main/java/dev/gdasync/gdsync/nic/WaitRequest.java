package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;

/**
 * A prepared wait for one CQE (LibGDSync's {@code gds_wait_request_t}): {@link #memops()} are a WAIT
 * on the CQE's validity word and the write that releases the CQE to the CPU.
 *
 * <p>While a wait is prepared and not released, {@link CompletionQueue#poll} does not return that CQE:
 * the CPU cannot reap a completion (and reuse its buffer) before the stream or kernel that waits on
 * it has passed the wait. {@link #releaseOnCpu()} releases it without an executor.
 */
public abstract class WaitRequest {

    /** Where a wait is in its life. */
    public enum State {
        /** Prepared; not yet handed to an executor. */
        PREPARED,
        /** Handed to an executor. */
        POSTED
    }

    private final CompletionQueue completionQueue;
    private final long index;
    private final MemopBatch memops;
    private volatile State state = State.PREPARED;

    /**
     * @param completionQueue the completion queue
     * @param index           the absolute index of the awaited CQE
     * @param memops          a WAIT32 on the validity word followed by a WRITE32 of the release word
     * @throws IllegalArgumentException if the memops have another shape
     */
    protected WaitRequest(CompletionQueue completionQueue, long index, MemopBatch memops) {
        if (memops.size() != 2 || !(memops.get(0) instanceof Memop.Wait32) || !(memops.get(1) instanceof Memop.Write32)) {
            throw new IllegalArgumentException("a wait request is WAIT32(validity) then WRITE32(release), got " + memops);
        }
        this.completionQueue = completionQueue;
        this.index = index;
        this.memops = memops;
    }

    /** @return the completion queue */
    public final CompletionQueue completionQueue() {
        return completionQueue;
    }

    /** @return the absolute index of the awaited CQE */
    public final long index() {
        return index;
    }

    /** @return the wait and the release write */
    public final MemopBatch memops() {
        return memops;
    }

    /** @return the state */
    public final State state() {
        return state;
    }

    /** @return the validity word waited on */
    public final MemoryWord word() {
        return ((Memop.Wait32) memops.get(0)).target();
    }

    /** @return the awaited value */
    public final int value() {
        return ((Memop.Wait32) memops.get(0)).value();
    }

    /** @return the wait's condition */
    public final WaitCondition condition() {
        return ((Memop.Wait32) memops.get(0)).condition();
    }

    /** @return the release word */
    public final MemoryWord releaseWord() {
        return ((Memop.Write32) memops.get(1)).target();
    }

    /** @return the value that releases the CQE */
    public final int releaseValue() {
        return ((Memop.Write32) memops.get(1)).value();
    }

    /**
     * Checks, without changing anything, that the wait may be handed to an executor.
     *
     * @throws IllegalStateException if it was already posted
     */
    public final void checkPost() {
        if (state != State.PREPARED) {
            throw new IllegalStateException("the wait for CQE #" + index + " of " + completionQueue.name()
                    + " was already posted: a CQE is waited on once");
        }
    }

    /** Records that an executor took the wait; call after {@link #checkPost()} succeeded. */
    public final void markPosted() {
        state = State.POSTED;
    }

    /** Releases the CQE to the CPU without waiting for it (LibGDSync's {@code gds_post_wait_cq}). */
    public final void releaseOnCpu() {
        releaseWord().set32(releaseValue(), true);
    }

    /** @return whether the CQE has arrived */
    public final boolean isSatisfied() {
        return condition().test(word().getAcquire32(), value());
    }

    @Override
    public String toString() {
        return "WaitRequest{" + completionQueue.name() + ", CQE #" + index + ", " + state + "}";
    }
}
