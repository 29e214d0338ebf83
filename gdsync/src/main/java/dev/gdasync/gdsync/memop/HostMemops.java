package dev.gdasync.gdsync.memop;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.trace.MemopBatchEvent;
import dev.gdasync.gdsync.trace.StreamWaitEvent;
import dev.gdasync.gdsync.trace.TraceEvents;

import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * Executes memops on the calling thread: the engine of host streams and of CPU descriptor posts.
 *
 * <p>Writes with a barrier are release stores (every earlier write of the thread is visible first);
 * writes without one are opaque stores. Waits read with acquire semantics, so whatever was written
 * before the awaited value is visible after the wait. A wait spins, then yields, then parks, and fails
 * with a {@link WaitTimeoutException} after the policy's timeout.
 *
 * <p>A wait that carries a {@link WaitTally} is counted there, with the time it waited when waits are timed
 * ({@link WaitTally#timeWaits(boolean)}). With the flight recorder on,
 * each batch ({@link MemopBatchEvent}) and each wait ({@link StreamWaitEvent}) is recorded; with it off, neither
 * costs more than a branch.
 */
public final class HostMemops {
    private static final BooleanSupplier NEVER = () -> false;

    static {
        // The event classes' first use is slow: paid here, not in the first batch or ring (TraceEvents).
        TraceEvents.preload();
    }

    private static final int TIME_CHECK_MASK = 0x3ff;

    private HostMemops() {
    }

    /**
     * Executes a batch in order.
     *
     * @param batch   the memops
     * @param policy  how waits wait
     * @param idler   this thread's idler, reset before each wait
     * @param aborted polled while waiting; a wait ends with {@link WaitAbortedException} once it is true
     * @throws NullPointerException if an argument is null
     * @throws WaitTimeoutException if a wait times out
     * @throws WaitAbortedException if {@code aborted} became true during a wait
     */
    public static void execute(MemopBatch batch, WaitPolicy policy, BackoffIdler idler, BooleanSupplier aborted) {
        Objects.requireNonNull(batch, "batch must not be null");
        requireExecutor(policy, idler, aborted);
        MemopBatchEvent event = new MemopBatchEvent();
        event.begin();
        for (int i = 0, n = batch.size(); i < n; i++) {
            execute(batch.get(i), policy, idler, aborted);
        }
        if (event.shouldCommit()) {
            event.memops = batch.size();
            event.commit();
        }
    }

    /**
     * Executes a batch in order on a thread that cannot be aborted.
     *
     * @param batch  the memops
     * @param policy how waits wait
     * @throws NullPointerException if an argument is null
     * @throws WaitTimeoutException if a wait times out
     */
    public static void execute(MemopBatch batch, WaitPolicy policy) {
        Objects.requireNonNull(batch, "batch must not be null");
        Objects.requireNonNull(policy, "policy must not be null");
        execute(batch, policy, new BackoffIdler(policy.backoff()), NEVER);
    }

    /**
     * Executes one memop.
     *
     * @param op      the memop
     * @param policy  how a wait waits
     * @param idler   this thread's idler
     * @param aborted polled while waiting
     * @throws NullPointerException if an argument is null
     * @throws WaitTimeoutException if a wait times out
     * @throws WaitAbortedException if {@code aborted} became true during a wait
     */
    public static void execute(Memop op, WaitPolicy policy, BackoffIdler idler, BooleanSupplier aborted) {
        Objects.requireNonNull(op, "op must not be null");
        requireExecutor(policy, idler, aborted);
        switch (op) {
            case Memop.Write32 w -> w.target().set32(w.value(), w.barrier());
            case Memop.Write64 w -> {
                w.target().set64(w.value(), w.barrier());
                if (w.doorbell() != null) {
                    w.doorbell().ring();
                }
            }
            case Memop.Wait32 w -> await32(w, policy, idler, aborted);
            case Memop.Wait64 w -> await64(w, policy, idler, aborted);
            case Memop.WriteMemory w -> {
                if (w.barrier()) {
                    VarHandle.releaseFence();
                }
                w.copyTo(w.target(), w.offset());
            }
            case Memop.Barrier b -> VarHandle.fullFence();
        }
    }

    /** Runs a WAIT32 memop: the wait, its tally and its event. */
    private static void await32(Memop.Wait32 w, WaitPolicy policy, BackoffIdler idler, BooleanSupplier aborted) {
        StreamWaitEvent event = new StreamWaitEvent();
        event.begin();
        WaitTally tally = w.tally();
        long waited = await(w.target(), w.value(), w.condition(), policy, idler, aborted, w.progress(), tally != null && WaitTally.timesWaits());
        if (tally != null) {
            tally.record(waited);
        }
        if (event.shouldCommit()) {
            waited(event, w.target(), w.value(), w.condition(), tally);
        }
    }

    /**
     * Fills and commits a wait's event, off the wait's method: its bytecode would count against the JIT's inlining
     * budget even when the event is disabled.
     */
    private static void waited(StreamWaitEvent event, MemoryWord word, long value, WaitCondition condition, WaitTally tally) {
        event.word = word.name();
        event.value = value;
        event.condition = condition.name();
        event.cqe = -1;
        if (tally != null) {
            event.completionQueue = tally.site();
            event.queuePairToken = tally.siteToken();
            event.cqe = tally.entryOf(value);
        }
        event.commit();
    }

    /** Runs a WAIT64 memop and its event. */
    private static void await64(Memop.Wait64 w, WaitPolicy policy, BackoffIdler idler, BooleanSupplier aborted) {
        StreamWaitEvent event = new StreamWaitEvent();
        event.begin();
        await(w.target(), w.value(), w.condition(), policy, idler, aborted, w.progress(), false);
        if (event.shouldCommit()) {
            waited(event, w.target(), w.value(), w.condition(), null);
        }
    }

    /**
     * Waits until a 32-bit word satisfies a condition.
     *
     * @param word    the word
     * @param value   the operand
     * @param cond    the condition
     * @param policy  how to wait
     * @param idler   this thread's idler
     * @param aborted polled while waiting
     * @throws NullPointerException if an argument is null
     * @throws WaitTimeoutException if the policy's timeout passes first
     * @throws WaitAbortedException if {@code aborted} becomes true first
     * @throws IllegalArgumentException if the word is not 32-bit
     */
    public static void await32(MemoryWord word, int value, WaitCondition cond, WaitPolicy policy,
                               BackoffIdler idler, BooleanSupplier aborted) {
        await32(word, value, cond, policy, idler, aborted, null);
    }

    /**
     * Waits until a 32-bit word satisfies a condition, progressing what writes it between looks.
     *
     * @param word     the word
     * @param value    the operand
     * @param cond     the condition
     * @param policy   how to wait
     * @param idler    this thread's idler
     * @param aborted  polled while waiting
     * @param progress run between looks (see {@link WaitProgress}), or {@code null}
     * @throws NullPointerException if an argument other than {@code progress} is null
     * @throws WaitTimeoutException if the policy's timeout passes first
     * @throws WaitAbortedException if {@code aborted} becomes true first
     * @throws IllegalArgumentException if the word is not 32-bit
     */
    public static void await32(MemoryWord word, int value, WaitCondition cond, WaitPolicy policy,
                               BackoffIdler idler, BooleanSupplier aborted, WaitProgress progress) {
        requireWait(word, cond, policy, idler, aborted);
        requireWidth(word, 4);
        await(word, value, cond, policy, idler, aborted, progress, false);
    }

    /**
     * Waits until a 64-bit word satisfies a condition.
     *
     * @param word    the word
     * @param value   the operand
     * @param cond    the condition
     * @param policy  how to wait
     * @param idler   this thread's idler
     * @param aborted polled while waiting
     * @throws NullPointerException if an argument is null
     * @throws WaitTimeoutException if the policy's timeout passes first
     * @throws WaitAbortedException if {@code aborted} becomes true first
     * @throws IllegalArgumentException if the word is not 64-bit
     */
    public static void await64(MemoryWord word, long value, WaitCondition cond, WaitPolicy policy,
                               BackoffIdler idler, BooleanSupplier aborted) {
        await64(word, value, cond, policy, idler, aborted, null);
    }

    /**
     * Waits until a 64-bit word satisfies a condition, progressing what writes it between looks.
     *
     * @param word     the word
     * @param value    the operand
     * @param cond     the condition
     * @param policy   how to wait
     * @param idler    this thread's idler
     * @param aborted  polled while waiting
     * @param progress run between looks (see {@link WaitProgress}), or {@code null}
     * @throws NullPointerException if an argument other than {@code progress} is null
     * @throws WaitTimeoutException if the policy's timeout passes first
     * @throws WaitAbortedException if {@code aborted} becomes true first
     * @throws IllegalArgumentException if the word is not 64-bit
     */
    public static void await64(MemoryWord word, long value, WaitCondition cond, WaitPolicy policy,
                               BackoffIdler idler, BooleanSupplier aborted, WaitProgress progress) {
        requireWait(word, cond, policy, idler, aborted);
        requireWidth(word, 8);
        await(word, value, cond, policy, idler, aborted, progress, false);
    }

    /**
     * One wait loop for both widths: a 32-bit word is read and compared as an int.
     *
     * @param timed whether to measure the wait (one more clock read, once it passed)
     * @return how long it waited when timed and the word was not ready at the first look, else 0
     */
    private static long await(MemoryWord word, long value, WaitCondition cond, WaitPolicy policy,
                              BackoffIdler idler, BooleanSupplier aborted, WaitProgress progress, boolean timed) {
        boolean narrow = word.width() == 4;
        long seen = narrow ? word.getAcquire32() : word.getAcquire64();
        if (narrow ? cond.test((int) seen, (int) value) : cond.test(seen, value)) {
            return 0;
        }
        idler.reset();
        long start = System.nanoTime();
        for (int i = 1; ; i++) {
            if (progress == null || progress.progress() == 0) {
                idler.idle();
            }
            seen = narrow ? word.getAcquire32() : word.getAcquire64();
            if (narrow ? cond.test((int) seen, (int) value) : cond.test(seen, value)) {
                return timed ? Math.max(1, System.nanoTime() - start) : 0;
            }
            if ((i & TIME_CHECK_MASK) == 0 || !idler.isSpinning()) {
                checkDeadline(word, cond, value, seen, start, policy, aborted);
            }
        }
    }

    private static void requireExecutor(WaitPolicy policy, BackoffIdler idler, BooleanSupplier aborted) {
        Objects.requireNonNull(policy, "policy must not be null");
        Objects.requireNonNull(idler, "idler must not be null");
        Objects.requireNonNull(aborted, "aborted must not be null");
    }

    private static void requireWait(MemoryWord word, WaitCondition cond, WaitPolicy policy, BackoffIdler idler,
                                    BooleanSupplier aborted) {
        Objects.requireNonNull(word, "word must not be null");
        Objects.requireNonNull(cond, "cond must not be null");
        requireExecutor(policy, idler, aborted);
    }

    private static void requireWidth(MemoryWord word, int width) {
        if (word.width() != width) {
            throw new IllegalArgumentException("a " + (width * 8) + "-bit wait needs a " + (width * 8) + "-bit word, got " + word);
        }
    }

    private static void checkDeadline(MemoryWord word, WaitCondition cond, long value, long seen, long start,
                                      WaitPolicy policy, BooleanSupplier aborted) {
        if (aborted.getAsBoolean()) {
            throw new WaitAbortedException("wait on " + word + " abandoned: its executor is shutting down");
        }
        long waited = System.nanoTime() - start;
        if (waited >= policy.timeoutNanos()) {
            throw new WaitTimeoutException(word, cond, value, seen, waited);
        }
    }
}
