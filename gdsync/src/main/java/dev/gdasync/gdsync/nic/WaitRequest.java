package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memop.WaitTally;

import java.util.Objects;

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
        POSTED,
        /** Taken back before it was posted ({@link #cancel()}): the next wait prepared is for the same CQE. */
        CANCELLED
    }

    private final CompletionQueue completionQueue;
    private final long index;
    private final MemoryWord word;
    private final int value;
    private final WaitCondition condition;
    private final MemoryWord releaseWord;
    private final int releaseValue;
    private final WaitProgress progress;
    /** Made on first use: a CPU that waits itself never needs them. */
    private MemopBatch memops;
    private volatile State state = State.PREPARED;

    /**
     * A wait for {@code word} to reach {@code value} (GEQ), released by writing {@code releaseValue} to
     * {@code releaseWord} with a barrier; its memops are made when first asked for.
     *
     * @param completionQueue the completion queue
     * @param index           the absolute index of the awaited CQE
     * @param word            the CQE's validity word, 32 bits
     * @param value           the value it reaches when the CQE is written
     * @param releaseWord     the CQE's release word, 32 bits
     * @param releaseValue    the value that releases the CQE
     * @param progress        what a host thread waiting on the word runs between looks (the provider's
     *                        transport progress), or {@code null} when the CQE is written without help
     * @throws IllegalArgumentException if a word is not 32 bits wide
     */
    protected WaitRequest(CompletionQueue completionQueue, long index, MemoryWord word, int value, MemoryWord releaseWord,
                          int releaseValue, WaitProgress progress) {
        this(completionQueue, index, word, value, WaitCondition.GEQ, releaseWord, releaseValue, progress);
    }

    /**
     * A wait for {@code word} to satisfy {@code condition} against {@code value} (an mlx5 CQE's owner bit, say),
     * released by writing {@code releaseValue} to {@code releaseWord} with a barrier.
     *
     * @param completionQueue the completion queue
     * @param index           the absolute index of the awaited CQE
     * @param word            the 32-bit word of the CQE that shows it was written
     * @param value           the condition's operand
     * @param condition       the condition
     * @param releaseWord     the CQE's release word, 32 bits
     * @param releaseValue    the value that releases the CQE
     * @param progress        what a host thread waiting on the word runs between looks, or {@code null}
     * @throws IllegalArgumentException if a word is not 32 bits wide
     */
    protected WaitRequest(CompletionQueue completionQueue, long index, MemoryWord word, int value, WaitCondition condition,
                          MemoryWord releaseWord, int releaseValue, WaitProgress progress) {
        if (word.width() != 4 || releaseWord.width() != 4) {
            throw new IllegalArgumentException("a wait request waits on and releases 32-bit words, got " + word + " and "
                    + releaseWord);
        }
        this.completionQueue = completionQueue;
        this.index = index;
        this.word = word;
        this.value = value;
        this.condition = Objects.requireNonNull(condition, "condition");
        this.releaseWord = releaseWord;
        this.releaseValue = releaseValue;
        this.progress = progress;
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
        MemopBatch m = memops;
        if (m == null) {
            // Benign race: two threads may each make an equal batch.
            m = MemopBatch.of(new Memop.Wait32(word, value, condition, false, progress, tally()),
                    new Memop.Write32(releaseWord, releaseValue, true));
            memops = m;
        }
        return m;
    }

    /** @return the state */
    public final State state() {
        return state;
    }

    /** @return the validity word waited on */
    public final MemoryWord word() {
        return word;
    }

    /** @return the awaited value */
    public final int value() {
        return value;
    }

    /** @return the wait's condition */
    public final WaitCondition condition() {
        return condition;
    }

    /** @return what a host thread waiting for the CQE runs between looks, or {@code null} */
    public final WaitProgress progress() {
        return progress;
    }

    /**
     * @return where a host executor counts this wait and its time (the queue pair's {@link TrafficMeter}), or
     *         {@code null}; providers override it
     */
    protected WaitTally tally() {
        return null;
    }

    /** @return the release word */
    public final MemoryWord releaseWord() {
        return releaseWord;
    }

    /** @return the value that releases the CQE */
    public final int releaseValue() {
        return releaseValue;
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

    /**
     * Takes the wait back, as if it had never been prepared: the next wait prepared on the completion queue is
     * for the same CQE. Only the last wait prepared on its completion queue can be cancelled, and only before it
     * is posted (the caller cancels the work that would have produced the CQE with it).
     *
     * @throws IllegalStateException if the wait was posted, cancelled, or is not the last one prepared
     */
    public final void cancel() {
        if (state != State.PREPARED) {
            throw new IllegalStateException("the wait for CQE #" + index + " of " + completionQueue.name() + " is "
                    + state + ": only a prepared wait can be cancelled");
        }
        cancelPrepared();
        state = State.CANCELLED;
    }

    /**
     * Provider part of {@link #cancel()}.
     *
     * @throws IllegalStateException if it is not the last wait prepared on its completion queue
     */
    protected abstract void cancelPrepared();

    /**
     * Says that an executor that cannot run the provider's progress (a GPU stream, a kernel) will wait on this
     * request's word: a provider whose CQEs are written by an engine of its own (the software mlx5 device) polls
     * eagerly for a while. A host executor calls {@link #progress()} between looks instead. Nothing by default.
     */
    public void expectExternalWait() {
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
