package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.MpException;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A communication context (OpenSHMEM's {@code shmem_ctx_t}, GIO's one queue per work-group): operations issued
 * through it are tracked apart from every other context's, so its {@link #quiet} completes its own only, and its
 * staging memory is its own, so a context's puts never wait for another's to free staging.
 *
 * <p>What it shares: an Mp opens one queue pair per peer, and opening more per context would need a connection
 * set-up per context and peer; so every context's requests to a PE ride the same queue pair. On the software NIC
 * that queue pair runs its requests in order, which makes ordering across contexts stronger than OpenSHMEM asks
 * (operations of different contexts to one PE are visible in issue order too); a context's {@link #quiet} still
 * waits only for its own requests. Like the runtime, a context is used by the runtime's thread (the Mp is
 * single-threaded): contexts separate completion, not threads.
 *
 * <p>The operations behave as the runtime's methods of the same name ({@link Shmem#put}, ...), with the same checks
 * and errors. {@link Shmem#barrierAll}, {@link Shmem#free} and {@link Shmem#close} complete every context's
 * operations too.
 */
public final class ShmemCtx implements AutoCloseable {
    private final Shmem shmem;
    private final RmaQueue queue;
    private boolean destroyed;

    ShmemCtx(Shmem shmem, RmaQueue queue) {
        this.shmem = shmem;
        this.queue = queue;
    }

    RmaQueue queue() {
        return queue;
    }

    /**
     * A put through this context; see {@link Shmem#put(MemorySegment, MemorySegment, int)}.
     *
     * @param dest   symmetric memory naming the target
     * @param source the data, any memory
     * @param pe     the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link Shmem#put(MemorySegment, MemorySegment, int)}
     * @throws IllegalStateException    if the context was destroyed
     */
    public void put(MemorySegment dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        shmem.putBytes(open(), dest, source, pe);
    }

    /**
     * A non-blocking put through this context; see {@link Shmem#putNbi}.
     *
     * @param dest   symmetric memory naming the target
     * @param source the data
     * @param pe     the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link Shmem#put(MemorySegment, MemorySegment, int)}
     * @throws IllegalStateException    if the context was destroyed
     */
    public void putNbi(MemorySegment dest, MemorySegment source, int pe) {
        put(dest, source, pe);
    }

    /**
     * A blocking get through this context: completes this context's operations in flight as well; see
     * {@link Shmem#get(MemorySegment, MemorySegment, int)}.
     *
     * @param dest   where the data lands
     * @param source symmetric memory naming the source range
     * @param pe     the source PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link Shmem#get(MemorySegment, MemorySegment, int)}
     * @throws MpException              if the transfer or the job failed
     * @throws IllegalStateException    if the context was destroyed
     */
    public void get(MemorySegment dest, MemorySegment source, int pe) {
        getNbi(dest, source, pe);
        queue.quiet();
    }

    /**
     * A non-blocking get through this context: {@code dest} is filled by this context's next {@link #quiet}.
     *
     * @param dest   where the data lands
     * @param source symmetric memory naming the source range
     * @param pe     the source PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link Shmem#get(MemorySegment, MemorySegment, int)}
     * @throws IllegalStateException    if the context was destroyed
     */
    public void getNbi(MemorySegment dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        shmem.getBytes(open(), dest, source, pe);
    }

    /**
     * Writes one 64-bit element through this context; see {@link Shmem#pLong}.
     *
     * @param dest  symmetric memory, 8-byte aligned
     * @param value the value
     * @param pe    the target PE
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link Shmem#pLong}
     * @throws IllegalStateException    if the context was destroyed
     */
    public void pLong(MemorySegment dest, long value, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        HeapTargets.requireElement(dest, 8, "dest");
        if ((dest.address() & 7) != 0) {
            throw new IllegalArgumentException("dest 0x" + Long.toHexString(dest.address()) + " is not 8-byte aligned");
        }
        put(dest, MemorySegment.ofArray(new long[] {value}), pe);
    }

    /**
     * Atomic fetch-and-add through this context; see {@link Shmem#atomicFetchAdd}.
     *
     * @param dest  symmetric memory, 8-byte aligned
     * @param value the addend
     * @param pe    the PE that owns the word
     * @return the word's value before the add
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link Shmem#atomicFetchAdd}
     * @throws IllegalStateException    if the context was destroyed
     */
    public long atomicFetchAdd(MemorySegment dest, long value, int pe) {
        return shmem.fetchAdd(open(), dest, value, pe);
    }

    /**
     * Atomic add through this context, complete at this context's next {@link #quiet}; see {@link Shmem#atomicAdd}.
     *
     * @param dest  symmetric memory, 8-byte aligned
     * @param value the addend
     * @param pe    the PE that owns the word
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link Shmem#atomicFetchAdd}
     * @throws IllegalStateException    if the context was destroyed
     */
    public void atomicAdd(MemorySegment dest, long value, int pe) {
        shmem.add(open(), dest, value, pe);
    }

    /**
     * Atomic compare-and-swap through this context; see {@link Shmem#atomicCompareSwap}.
     *
     * @param dest  symmetric memory, 8-byte aligned
     * @param cond  the expected value
     * @param value the value stored when the word equals {@code cond}
     * @param pe    the PE that owns the word
     * @return the word's value before the operation
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link Shmem#atomicFetchAdd}
     * @throws IllegalStateException    if the context was destroyed
     */
    public long atomicCompareSwap(MemorySegment dest, long cond, long value, int pe) {
        return shmem.compareSwap(open(), dest, cond, value, pe);
    }

    /**
     * Put with signal through this context; see {@link Shmem#putSignal}.
     *
     * @param dest    symmetric memory naming the target
     * @param source  the data
     * @param sigAddr the symmetric signal word
     * @param signal  the value stored or added
     * @param sigOp   SET or ADD
     * @param pe      the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link Shmem#putSignal}
     * @throws IllegalStateException    if the context was destroyed
     */
    public void putSignal(MemorySegment dest, MemorySegment source, MemorySegment sigAddr, long signal,
                          ShmemSignalOp sigOp, int pe) {
        shmem.putSignal(open(), dest, source, sigAddr, signal, sigOp, pe);
    }

    /**
     * Non-blocking put with signal through this context; see {@link Shmem#putSignalNbi}.
     *
     * @param dest    symmetric memory naming the target
     * @param source  the data
     * @param sigAddr the symmetric signal word
     * @param signal  the value stored or added
     * @param sigOp   SET or ADD
     * @param pe      the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link Shmem#putSignal}
     * @throws IllegalStateException    if the context was destroyed
     */
    public void putSignalNbi(MemorySegment dest, MemorySegment source, MemorySegment sigAddr, long signal,
                             ShmemSignalOp sigOp, int pe) {
        putSignal(dest, source, sigAddr, signal, sigOp, pe);
    }

    /**
     * Orders this context's puts and atomics to each PE (OpenSHMEM's {@code shmem_ctx_fence}); see
     * {@link Shmem#fence}.
     *
     * @throws MpException           if an operation failed (on providers where the fence completes them)
     * @throws IllegalStateException if the context was destroyed
     */
    public void fence() {
        RmaQueue q = open();
        if (!shmem.orderedNic()) {
            q.quiet();
        }
    }

    /**
     * Completes this context's operations in flight, and only those (OpenSHMEM's {@code shmem_ctx_quiet}).
     *
     * @throws MpException           if an operation failed (the others are completed first) or the job failed
     * @throws IllegalStateException if the context was destroyed
     */
    public void quiet() {
        open().quiet();
    }

    /** @return how many of this context's operations are in flight (not completed by a quiet yet) */
    public int inFlight() {
        return destroyed ? 0 : queue.inFlight();
    }

    /**
     * Destroys the context (OpenSHMEM's {@code shmem_ctx_destroy}): completes its operations, then frees its staging.
     * Destroying twice does nothing.
     *
     * @throws MpException if an operation failed (the context is destroyed all the same)
     */
    @Override
    public void close() {
        if (destroyed) {
            return;
        }
        try {
            queue.quiet();
        } finally {
            release();
        }
    }

    /** Frees the staging without completing anything (the runtime is closing). */
    void release() {
        if (!destroyed) {
            destroyed = true;
            shmem.forget(this);
            queue.close();
        }
    }

    private RmaQueue open() {
        if (destroyed) {
            throw new IllegalStateException("this shmem context was destroyed");
        }
        return queue;
    }
}
