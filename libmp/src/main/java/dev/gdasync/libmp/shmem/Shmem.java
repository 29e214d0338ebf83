package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.MpWindow;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.IntUnaryOperator;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

// Why this file is long: it is the whole OpenSHMEM-style API of one PE (67 public calls: allocation, RMA, atomics,
// signals, waits, stream forms), each documented here; the work is in the rooms beside it: the address checks
// (HeapTargets), the waits and tests (WordWaits), the heap's agreement (HeapAgreement), the staging queue, the heap,
// the stream forms and the KI preparation.
/**
 * One PE's OpenSHMEM-style runtime over an {@link Mp} (OpenSHMEM 1.5's host API; seed 000's model): a PE is a rank.
 *
 * <p><b>Symmetric heap.</b> Every PE owns a heap of the same size, exposed to every other PE through one window.
 * {@link #malloc} and {@link #free} are collective: every PE calls them with the same arguments in the same order, and
 * a deterministic allocator gives the same offset on every PE. A symmetric address is a {@link MemorySegment} inside
 * this PE's heap (what {@code malloc} returned, or a slice of it); the same offset names the matching memory of every
 * other PE. Before it changes the heap, each collective call compares every PE's arguments through the heap itself, so
 * PEs that disagree all get the same {@link IllegalArgumentException} and the heap stays as it was.
 *
 * <p><b>Remote memory access.</b> {@code put}, {@code p} and the non-fetching atomics return once the source may be
 * reused (it was copied to registered staging memory); the data reaches the target PE at the latest at {@link
 * #quiet}. {@code get}, {@code g} and the fetching atomics return with the value; a non-blocking get ({@link
 * #getNbi}) fills its destination at {@link #quiet}. Operations on this PE's own heap are memory copies and CPU
 * atomics, done at once. Every destination and source in a heap must lie in one live allocation; atomics need an
 * 8-byte-aligned 64-bit word in a segment of at least 8 bytes (the 32-bit atomics a 4-byte-aligned word in a segment
 * of at least 4 bytes).
 *
 * <p><b>Ordering.</b> {@link #fence} orders this PE's puts, {@code p}s and atomics to each PE: those issued after it
 * are visible at that PE after those issued before it. On the software NIC it posts nothing: each PE reaches a peer
 * through one queue pair, and the software NIC executes a queue pair's requests one at a time in queue order (over
 * shared memory the copy of one is done before the next starts; over UCX one request is in flight per queue pair), so
 * every put is in the target's memory before a later one to that PE begins. On another provider it is {@link #quiet}.
 *
 * <p><b>Failures.</b> When the job fails (a PE aborted, a process died), operations in flight fail, later ones are
 * refused with an {@link MpException} that names the cause, and {@link #waitUntil} ends with one; a wait no PE ends
 * fails after the Mp's wait timeout. A barrier that fails ({@link #barrierAll}, {@link #syncAll} and the barriers of
 * {@code malloc}, {@code calloc} and {@code free}) throws the bootstrap's {@link
 * dev.gdasync.libmp.bootstrap.BootstrapException}, not an {@code MpException}. Bad arguments raise an exception
 * naming the rule and change nothing.
 *
 * <p>Threading: a runtime belongs to the thread that uses its Mp (Mp is single-threaded).
 */
public final class Shmem implements AutoCloseable {
    /** The provider whose queue pairs run their requests in order, so that a fence needs no quiet. */
    private static final String SOFTWARE_NIC = "swnic";

    /** Staging memory for puts and gets in flight; larger transfers go in pieces. */
    static final long STAGING_BYTES = 1 << 20;
    /** The default context's most requests in flight; other contexts get {@link #CTX_IN_FLIGHT}. */
    private static final int DEFAULT_IN_FLIGHT = 256;
    private static final int CTX_IN_FLIGHT = 64;
    private static final VarHandle LONG = JAVA_LONG.varHandle();

    private final Mp mp;
    private final MemorySegment heapMemory;
    private final MpWindow window;
    private final SymmetricHeap heap;
    private final RmaQueue queue;
    /** The checks on symmetric addresses every call makes before it sends or changes anything. */
    private final HeapTargets targets;
    /** The wait and test family on this PE's words. */
    private final WordWaits waits;
    /** The agreement of the collective calls that change the heap. */
    private final HeapAgreement agreement;
    /** Contexts created and not destroyed yet; a barrier, free or close completes theirs too. */
    private final List<ShmemCtx> contexts = new ArrayList<>();
    /** Each PE's heap as mapped into this process, looked up on first {@link #ptr}; null where it is not. */
    private MemorySegment[] peerHeaps;
    /** Heap offset of the counter {@link #barrierAllOnStream} adds to. */
    private final long streamBarrier;
    /** Operations rung by streams; made on first use. */
    private StreamRma streams;
    /** Whether the NIC executes each queue pair in order, so that fence needs no wire operation. */
    private final boolean orderedNic;
    /** The KI launch prepared and not completed yet, or null; while there is one, other calls are refused. */
    private ShmemKi ki;
    private boolean closed;

    private Shmem(Mp mp, long heapBytes) {
        this.mp = mp;
        int n = mp.size();
        // Agreement areas, then one line for the stream barrier's counter.
        long header = roundUp(2L * n * HeapAgreement.RECORD) + SymmetricHeap.ALIGNMENT;
        this.streamBarrier = header - SymmetricHeap.ALIGNMENT;
        this.heapMemory = mp.allocate(header + heapBytes);
        this.window = mp.windowCreate(heapMemory);
        for (int p = 0; p < n; p++) {
            if (window.size(p) != heapMemory.byteSize()) {
                // Every PE sees the mismatch, so every PE gets here and the collective destroy completes.
                mp.windowDestroy(window);
                mp.free(heapMemory);
                throw new IllegalArgumentException("PE " + p + " made a symmetric heap of " + (window.size(p) - header)
                        + " bytes, PE " + mp.rank() + " of " + heapBytes + ": every PE passes the same heap size");
            }
        }
        this.heap = new SymmetricHeap(header, header + heapBytes);
        this.queue = new RmaQueue(mp, window, STAGING_BYTES, Math.max(1, Math.min(DEFAULT_IN_FLIGHT,
                mp.requestPoolSize() / 4)));
        // By name, not by type: libmp sees the NIC model only. The software NIC runs a queue pair's requests in order.
        this.orderedNic = SOFTWARE_NIC.equals(mp.config().nic().provider());
        this.targets = new HeapTargets(heap, heapMemory, n, this::requireOpen);
        this.waits = new WordWaits(mp, heapMemory, targets, this::requireOpen);
        this.agreement = new HeapAgreement(mp, heapMemory, queue);
        mp.barrier();
    }

    /**
     * Starts this PE's runtime (OpenSHMEM's {@code shmem_init}); collective: every PE calls it with the same heap size.
     *
     * @param mp        this PE's Mp, used by this runtime's thread only from now on; the caller closes it after
     *                  {@link #close()}
     * @param heapBytes the symmetric heap's size, {@code >= 1}
     * @return the runtime
     * @throws NullPointerException     if mp is null
     * @throws IllegalArgumentException if heapBytes is not positive (this PE then takes no part), or the PEs passed
     *                                  different sizes (every PE throws)
     * @throws IllegalStateException    if the Mp is closed
     */
    public static Shmem init(Mp mp, long heapBytes) {
        Objects.requireNonNull(mp, "mp must not be null");
        if (heapBytes < 1) {
            throw new IllegalArgumentException("heapBytes must be >= 1, got " + heapBytes);
        }
        return new Shmem(mp, heapBytes);
    }

    /** @return this PE's number (OpenSHMEM's {@code shmem_my_pe}) */
    public int myPe() {
        return mp.rank();
    }

    /** @return the number of PEs (OpenSHMEM's {@code shmem_n_pes}) */
    public int nPes() {
        return mp.size();
    }

    /** @return the Mp this runtime works over */
    public Mp mp() {
        return mp;
    }

    /** @return the symmetric heap's usable size in bytes, the same on every PE */
    public long heapSize() {
        return heap.limit() - heap.base();
    }

    // ---- symmetric heap ----

    /**
     * Allocates a symmetric block (OpenSHMEM's {@code shmem_malloc}); collective, with a barrier. The block starts on a
     * 64-byte boundary, at the same offset on every PE; its content is undefined (use {@link #calloc} for zeros).
     *
     * @param bytes the length, {@code >= 1}, the same on every PE
     * @return this PE's block, exactly {@code bytes} long
     * @throws IllegalArgumentException if bytes is not positive, or the PEs passed different lengths (every PE throws,
     *                                  naming the PEs and lengths; nothing is allocated)
     * @throws IllegalStateException    if the heap has no free range that large (on every PE), or this runtime is
     *                                  closed
     */
    public MemorySegment malloc(long bytes) {
        requireOpen();
        agreement.agree(HeapAgreement.KIND_MALLOC, "malloc", bytes, 0);
        if (bytes < 1) {
            throw new IllegalArgumentException("bytes must be >= 1, got " + bytes);
        }
        return allocate(bytes);
    }

    /**
     * Allocates a zero-filled symmetric block of {@code count} elements of {@code size} bytes (OpenSHMEM's
     * {@code shmem_calloc}); collective.
     *
     * @param count the number of elements, {@code >= 1}
     * @param size  the bytes of one element, {@code >= 1}
     * @return this PE's block, zero-filled
     * @throws IllegalArgumentException if count or size is not positive or their product overflows, or the PEs
     *                                  disagree (every PE throws, naming calloc, the PEs and their count and size;
     *                                  nothing is allocated)
     * @throws IllegalStateException    see {@link #malloc}
     */
    public MemorySegment calloc(long count, long size) {
        requireOpen();
        // Agreed as calloc, not malloc: a mismatch names the call the program made, and calloc's extra barrier
        // below would not match a malloc on another PE.
        agreement.agree(HeapAgreement.KIND_CALLOC, "calloc", count, size);
        long bytes;
        try {
            bytes = count < 1 || size < 1 ? -1 : Math.multiplyExact(count, size);
        } catch (ArithmeticException e) {
            bytes = -1;
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("count and size must be >= 1 and their product a long, got " + count
                    + " x " + size);
        }
        MemorySegment m = allocate(bytes);
        m.fill((byte) 0);
        // No PE may put into the block before every PE has zeroed its own.
        mp.barrier();
        return m;
    }

    /**
     * Frees a symmetric block (OpenSHMEM's {@code shmem_free}); collective, with a barrier. Operations still in
     * flight are completed first ({@link #quiet}).
     *
     * @param block a segment {@link #malloc} or {@link #calloc} returned and not freed yet (all of it), the same block
     *              on every PE
     * @throws NullPointerException     if block is null
     * @throws IllegalArgumentException if the block is not a live block of this heap on some PE, or the PEs passed
     *                                  different blocks (every PE throws; nothing is freed)
     * @throws IllegalStateException    if this runtime is closed
     */
    public void free(MemorySegment block) {
        Objects.requireNonNull(block, "block must not be null");
        requireOpen();
        long offset = targets.offsetIn(block);
        boolean isBlock = offset >= 0 && heap.liveLength(offset) == block.byteSize();
        quietAll();
        agreement.agree(HeapAgreement.KIND_FREE, "free", isBlock ? offset : -1, 0);
        if (!isBlock) {
            throw new IllegalArgumentException(HeapTargets.describe(block) + " is not a live block of the symmetric heap (freed "
                    + "already, never allocated, or only a part of one): free takes what malloc returned");
        }
        heap.release(offset);
    }

    /**
     * Direct load/store access to a PE's symmetric memory (OpenSHMEM's {@code shmem_ptr}), where that PE's heap is
     * mapped into this process: always for this PE; for another PE when the NIC maps its memory here (the software
     * NIC over shared memory: PEs on one host). Loads and stores through it are not ordered with this PE's puts and
     * atomics, nor with the owner's: synchronise as for any shared memory (a barrier, or a flag written with release
     * and read with acquire semantics). Valid until the block is freed or the runtime closed.
     *
     * @param dest symmetric memory of this PE naming the range ({@code dest.byteSize()} bytes)
     * @param pe   the PE whose memory is wanted
     * @return that PE's matching memory, {@code dest.byteSize()} long, or null when it is not mapped here
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException if the PE is out of range, or the range is not inside one live block
     * @throws IllegalStateException    if this runtime is closed
     */
    public MemorySegment ptr(MemorySegment dest, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        requireOpen();
        long offset = targets.target(dest, dest.byteSize(), pe, "dest");
        if (peerHeaps == null) {
            peerHeaps = new MemorySegment[nPes()];
            for (int p = 0; p < nPes(); p++) {
                peerHeaps[p] = window.peerMemory(p);
            }
        }
        MemorySegment heapThere = peerHeaps[pe];
        return heapThere == null ? null : heapThere.asSlice(offset, dest.byteSize());
    }

    /**
     * Prepares a launch of the KI model (the device API of {@code shmem.cuh}, one context per block): completes
     * everything outstanding, then pre-fills {@code slotsPerPe} send-queue slots toward every other PE as templated
     * RDMA writes a kernel patches and rings, and writes the state its blocks share. Launch a kernel over the result's
     * table and state with exactly {@code blocks} blocks (the host KI executor: {@code HostKiExecutor.shmem}), join
     * it, then {@link ShmemKi#complete()}. Until then this runtime refuses other calls. Not collective.
     *
     * @param executor   what will run the kernel (its address map names the memory in the state)
     * @param blocks     contexts, {@code >= 1}
     * @param slotsPerPe slots toward each other PE, {@code >= 1}: the most puts, p and SET signals the launch may ring
     *                   to one PE; at most half the send queue depth
     * @return the prepared launch
     * @throws NullPointerException     if the executor is null
     * @throws IllegalArgumentException if blocks or slotsPerPe is out of range
     * @throws IllegalStateException    if a KI launch is already prepared, or this runtime is closed
     */
    public ShmemKi kiPrepare(dev.gdasync.gdsync.ki.KiTableExecutor executor, int blocks, int slotsPerPe) {
        return kiPrepare(executor, blocks, slotsPerPe, mp.config().waitTimeout());
    }

    /**
     * Prepares a launch of the KI model as {@link #kiPrepare(dev.gdasync.gdsync.ki.KiTableExecutor, int, int)} does,
     * with another bound for the kernel's waits than the Mp's wait timeout.
     *
     * @param executor   what will run the kernel
     * @param blocks     contexts, {@code >= 1}
     * @param slotsPerPe slots toward each other PE, {@code >= 1}, at most half the send queue depth
     * @param timeout    the bound of every wait of the kernel, positive
     * @return the prepared launch
     * @throws NullPointerException     if the executor or the timeout is null
     * @throws IllegalArgumentException if blocks, slotsPerPe or the timeout is out of range
     * @throws IllegalStateException    if a KI launch is already prepared, or this runtime is closed
     */
    public ShmemKi kiPrepare(dev.gdasync.gdsync.ki.KiTableExecutor executor, int blocks, int slotsPerPe,
                             java.time.Duration timeout) {
        Objects.requireNonNull(executor, "executor must not be null");
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        requireOpen();
        int depth = mp.config().queuePairs().sendDepth();
        if (blocks < 1 || blocks > 1024) {
            throw new IllegalArgumentException("blocks must be in 1..1024, got " + blocks);
        }
        if (slotsPerPe < 1 || slotsPerPe > depth / 2) {
            throw new IllegalArgumentException("slotsPerPe must be in 1.." + depth / 2 + " (half the send queue depth "
                    + depth + "), got " + slotsPerPe);
        }
        long slots = (long) slotsPerPe * (nPes() - 1);
        if (slots > mp.requestPoolSize() / 2) {
            throw new IllegalArgumentException(slotsPerPe + " slots toward each of " + (nPes() - 1) + " PEs need " + slots
                    + " requests, more than half the Mp's pool of " + mp.requestPoolSize());
        }
        quietAll();
        ki = new ShmemKi(this, heapMemory, window, executor, blocks, slotsPerPe, timeout.toNanos());
        return ki;
    }

    /** A KI launch ended on the CPU: other calls are taken again. */
    void kiEnded(ShmemKi k) {
        if (ki == k) {
            ki = null;
        }
    }

    /**
     * Creates a communication context (OpenSHMEM's {@code shmem_ctx_create}): its own staging memory and its own
     * record of operations in flight, so that its {@link ShmemCtx#quiet} completes its operations only. Not
     * collective. See {@link ShmemCtx} for what a context shares with the others.
     *
     * @return the context; destroy it with {@link ShmemCtx#close()} (closing the runtime destroys it too)
     * @throws IllegalStateException if the contexts' requests in flight would no longer fit the Mp's request pool
     *                               (each context may hold 64), or this runtime is closed
     */
    public ShmemCtx ctxCreate() {
        requireOpen();
        int inFlight = queue.maxInFlight();
        for (ShmemCtx c : contexts) {
            inFlight += c.queue().maxInFlight();
        }
        if (inFlight + CTX_IN_FLIGHT > mp.requestPoolSize() * 3 / 4) {
            throw new IllegalStateException("no room for another context: " + contexts.size() + " contexts and the "
                    + "default one may hold " + inFlight + " of the Mp's " + mp.requestPoolSize() + " requests in flight "
                    + "(destroy a context or give the Mp a larger request pool)");
        }
        ShmemCtx c = new ShmemCtx(this, new RmaQueue(mp, window, STAGING_BYTES, CTX_IN_FLIGHT));
        contexts.add(c);
        return c;
    }

    /** @return the default context's operations in flight (for tests) */
    int inFlight() {
        return queue.inFlight();
    }

    /** A context is destroyed: forget it. */
    void forget(ShmemCtx c) {
        contexts.remove(c);
    }

    // ---- puts ----

    /**
     * Copies bytes into a PE's symmetric memory (OpenSHMEM's {@code shmem_putmem}); returns once {@code source} may be
     * reused. The data is at the target by the next {@link #quiet} (or barrier).
     *
     * @param dest   symmetric memory of this PE whose offset names the target; {@code source.byteSize()} bytes are
     *               written from its start
     * @param source the data, any memory
     * @param pe     the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the PE is out of range, or the target range is not inside one live block
     *                                  of the heap (nothing is sent)
     * @throws MpException              if the job failed
     */
    public void put(MemorySegment dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        putBytes(dest, source, pe);
    }

    /**
     * Non-blocking put (OpenSHMEM's {@code shmem_putmem_nbi}): like {@link #put}, whose source is copied before it
     * returns too; the data is at the target by the next {@link #quiet}.
     *
     * @param dest   symmetric memory of this PE naming the target
     * @param source the data
     * @param pe     the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link #put}
     */
    public void putNbi(MemorySegment dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        putBytes(dest, source, pe);
    }

    /**
     * Puts 64-bit elements (OpenSHMEM's {@code shmem_long_put}).
     *
     * @param dest   symmetric memory, 8-byte aligned, naming where element 0 goes
     * @param source the elements
     * @param pe     the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if dest is not 8-byte aligned, or see {@link #put}
     */
    public void put(MemorySegment dest, long[] source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        targets.requireAligned(dest, 8, "dest");
        putBytes(dest, MemorySegment.ofArray(source), pe);
    }

    /**
     * Puts 32-bit elements (OpenSHMEM's {@code shmem_int_put}).
     *
     * @param dest   symmetric memory, 4-byte aligned, naming where element 0 goes
     * @param source the elements
     * @param pe     the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if dest is not 4-byte aligned, or see {@link #put}
     */
    public void put(MemorySegment dest, int[] source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        targets.requireAligned(dest, 4, "dest");
        putBytes(dest, MemorySegment.ofArray(source), pe);
    }

    /**
     * Puts doubles (OpenSHMEM's {@code shmem_double_put}).
     *
     * @param dest   symmetric memory, 8-byte aligned, naming where element 0 goes
     * @param source the elements
     * @param pe     the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if dest is not 8-byte aligned, or see {@link #put}
     */
    public void put(MemorySegment dest, double[] source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        targets.requireAligned(dest, 8, "dest");
        putBytes(dest, MemorySegment.ofArray(source), pe);
    }

    /**
     * Writes one 64-bit element (OpenSHMEM's {@code shmem_long_p}).
     *
     * @param dest  symmetric memory, 8-byte aligned, whose first 8 bytes name the element
     * @param value the value
     * @param pe    the target PE
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException if dest is shorter than 8 bytes or not 8-byte aligned, or see {@link #put}
     */
    public void pLong(MemorySegment dest, long value, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        HeapTargets.requireElement(dest, 8, "dest");
        targets.requireAligned(dest, 8, "dest");
        putBytes(dest, MemorySegment.ofArray(new long[] {value}), pe);
    }

    /**
     * Writes one 32-bit element (OpenSHMEM's {@code shmem_int_p}).
     *
     * @param dest  symmetric memory, 4-byte aligned, whose first 4 bytes name the element
     * @param value the value
     * @param pe    the target PE
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException if dest is shorter than 4 bytes or not 4-byte aligned, or see {@link #put}
     */
    public void pInt(MemorySegment dest, int value, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        HeapTargets.requireElement(dest, 4, "dest");
        targets.requireAligned(dest, 4, "dest");
        putBytes(dest, MemorySegment.ofArray(new int[] {value}), pe);
    }

    /**
     * Writes one double (OpenSHMEM's {@code shmem_double_p}).
     *
     * @param dest  symmetric memory, 8-byte aligned, whose first 8 bytes name the element
     * @param value the value
     * @param pe    the target PE
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException if dest is shorter than 8 bytes or not 8-byte aligned, or see {@link #put}
     */
    public void pDouble(MemorySegment dest, double value, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        HeapTargets.requireElement(dest, 8, "dest");
        targets.requireAligned(dest, 8, "dest");
        putBytes(dest, MemorySegment.ofArray(new double[] {value}), pe);
    }

    // ---- gets ----

    /**
     * Copies bytes from a PE's symmetric memory (OpenSHMEM's {@code shmem_getmem}); returns with {@code dest} filled.
     * It completes every operation of this PE in flight as well.
     *
     * @param dest   where the data lands, any memory; {@code dest.byteSize()} bytes are read
     * @param source symmetric memory of this PE whose offset names the source range
     * @param pe     the source PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the PE is out of range, or the source range is not inside one live block
     *                                  (nothing is read)
     * @throws MpException              if the transfer failed or the job failed
     */
    public void get(MemorySegment dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        getBytes(dest, source, pe);
        queue.quiet();
    }

    /**
     * Non-blocking get (OpenSHMEM's {@code shmem_getmem_nbi}): {@code dest} is filled by the next {@link #quiet}
     * and must not be read or written before.
     *
     * @param dest   where the data lands
     * @param source symmetric memory naming the source range
     * @param pe     the source PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link #get}
     */
    public void getNbi(MemorySegment dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        getBytes(dest, source, pe);
    }

    /**
     * Gets 64-bit elements (OpenSHMEM's {@code shmem_long_get}): {@code dest.length} of them.
     *
     * @param dest   where the elements land
     * @param source symmetric memory, 8-byte aligned, naming element 0
     * @param pe     the source PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if source is not 8-byte aligned, or see {@link #get}
     */
    public void get(long[] dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        targets.requireAligned(source, 8, "source");
        get(MemorySegment.ofArray(dest), source, pe);
    }

    /**
     * Gets 32-bit elements (OpenSHMEM's {@code shmem_int_get}): {@code dest.length} of them.
     *
     * @param dest   where the elements land
     * @param source symmetric memory, 4-byte aligned, naming element 0
     * @param pe     the source PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if source is not 4-byte aligned, or see {@link #get}
     */
    public void get(int[] dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        targets.requireAligned(source, 4, "source");
        get(MemorySegment.ofArray(dest), source, pe);
    }

    /**
     * Gets doubles (OpenSHMEM's {@code shmem_double_get}): {@code dest.length} of them.
     *
     * @param dest   where the elements land
     * @param source symmetric memory, 8-byte aligned, naming element 0
     * @param pe     the source PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if source is not 8-byte aligned, or see {@link #get}
     */
    public void get(double[] dest, MemorySegment source, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        targets.requireAligned(source, 8, "source");
        get(MemorySegment.ofArray(dest), source, pe);
    }

    /**
     * Reads one 64-bit element (OpenSHMEM's {@code shmem_long_g}).
     *
     * @param source symmetric memory, 8-byte aligned
     * @param pe     the source PE
     * @return the element
     * @throws NullPointerException     if source is null
     * @throws IllegalArgumentException if source is shorter than 8 bytes or not 8-byte aligned, or see {@link #get}
     */
    public long gLong(MemorySegment source, int pe) {
        Objects.requireNonNull(source, "source must not be null");
        HeapTargets.requireElement(source, 8, "source");
        long[] v = new long[1];
        get(v, source, pe);
        return v[0];
    }

    /**
     * Reads one 32-bit element (OpenSHMEM's {@code shmem_int_g}).
     *
     * @param source symmetric memory, 4-byte aligned
     * @param pe     the source PE
     * @return the element
     * @throws NullPointerException     if source is null
     * @throws IllegalArgumentException if source is shorter than 4 bytes or not 4-byte aligned, or see {@link #get}
     */
    public int gInt(MemorySegment source, int pe) {
        Objects.requireNonNull(source, "source must not be null");
        HeapTargets.requireElement(source, 4, "source");
        int[] v = new int[1];
        get(v, source, pe);
        return v[0];
    }

    /**
     * Reads one double (OpenSHMEM's {@code shmem_double_g}).
     *
     * @param source symmetric memory, 8-byte aligned
     * @param pe     the source PE
     * @return the element
     * @throws NullPointerException     if source is null
     * @throws IllegalArgumentException if source is shorter than 8 bytes or not 8-byte aligned, or see {@link #get}
     */
    public double gDouble(MemorySegment source, int pe) {
        Objects.requireNonNull(source, "source must not be null");
        HeapTargets.requireElement(source, 8, "source");
        double[] v = new double[1];
        get(v, source, pe);
        return v[0];
    }

    // ---- atomics on 64-bit words ----

    /**
     * Atomically adds to a 64-bit word and returns its old value (OpenSHMEM's {@code shmem_long_atomic_fetch_add}).
     * Atomic with respect to every other atomic of this API on that word, from any PE.
     *
     * @param dest  symmetric memory, 8-byte aligned, whose first 8 bytes are the word
     * @param value the addend (negative subtracts)
     * @param pe    the PE that owns the word
     * @return the word's value before the add
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException if dest is shorter than 8 bytes or not 8-byte aligned, the PE is out of range
     *                                  or the word is not in a live block (checked before anything is sent; nothing
     *                                  changes)
     * @throws MpException              if the operation or the job failed
     */
    public long atomicFetchAdd(MemorySegment dest, long value, int pe) {
        return fetchAdd(queue, dest, value, pe);
    }

    /**
     * Atomically adds to a 64-bit word (OpenSHMEM's {@code shmem_long_atomic_add}); done at the target by the next
     * {@link #quiet}, ordered by {@link #fence}.
     *
     * @param dest  symmetric memory, 8-byte aligned
     * @param value the addend
     * @param pe    the PE that owns the word
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAdd}
     */
    public void atomicAdd(MemorySegment dest, long value, int pe) {
        add(queue, dest, value, pe);
    }

    /**
     * Atomically adds one (OpenSHMEM's {@code shmem_long_atomic_inc}); see {@link #atomicAdd}.
     *
     * @param dest symmetric memory, 8-byte aligned
     * @param pe   the PE that owns the word
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAdd}
     */
    public void atomicInc(MemorySegment dest, int pe) {
        atomicAdd(dest, 1, pe);
    }

    /**
     * Atomically adds one and returns the old value (OpenSHMEM's {@code shmem_long_atomic_fetch_inc}).
     *
     * @param dest symmetric memory, 8-byte aligned
     * @param pe   the PE that owns the word
     * @return the word's value before the increment
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAdd}
     */
    public long atomicFetchInc(MemorySegment dest, int pe) {
        return atomicFetchAdd(dest, 1, pe);
    }

    /**
     * Atomically reads a 64-bit word (OpenSHMEM's {@code shmem_long_atomic_fetch}): a fetch-and-add of zero.
     *
     * @param source symmetric memory, 8-byte aligned
     * @param pe     the PE that owns the word
     * @return the word's value
     * @throws NullPointerException     if source is null
     * @throws IllegalArgumentException see {@link #atomicFetchAdd}
     */
    public long atomicFetch(MemorySegment source, int pe) {
        return fetchWord(queue, pe, targets.atomicTarget(source, pe));
    }

    /**
     * Atomically replaces a 64-bit word if it equals {@code cond} and returns its old value (OpenSHMEM's
     * {@code shmem_long_atomic_compare_swap}): the swap happened exactly when the result equals {@code cond}.
     *
     * @param dest  symmetric memory, 8-byte aligned
     * @param cond  the expected value
     * @param value the value stored when the word equals {@code cond}
     * @param pe    the PE that owns the word
     * @return the word's value before the operation
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAdd}
     */
    public long atomicCompareSwap(MemorySegment dest, long cond, long value, int pe) {
        return compareSwap(queue, dest, cond, value, pe);
    }

    /**
     * Atomically replaces a 64-bit word and returns its old value (OpenSHMEM's {@code shmem_long_atomic_swap}). The
     * NIC has no swap: a remote swap is a loop of compare-and-swaps from the last value seen, atomic with respect to
     * every other atomic on the word; under contention it may take several round trips.
     *
     * @param dest  symmetric memory, 8-byte aligned
     * @param value the new value
     * @param pe    the PE that owns the word
     * @return the word's value before the swap
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAdd}
     */
    public long atomicSwap(MemorySegment dest, long value, int pe) {
        return swap(queue, dest, value, pe);
    }

    /**
     * Atomically writes a 64-bit word (OpenSHMEM's {@code shmem_long_atomic_set}): a swap whose old value is dropped.
     *
     * @param dest  symmetric memory, 8-byte aligned
     * @param value the new value
     * @param pe    the PE that owns the word
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAdd}
     */
    public void atomicSet(MemorySegment dest, long value, int pe) {
        atomicSwap(dest, value, pe);
    }

    // ---- atomics on 32-bit words ----

    /**
     * Atomically adds to a 32-bit word and returns its old value (OpenSHMEM's {@code shmem_int_atomic_fetch_add});
     * wraps around like Java's {@code int}. The NIC has 64-bit atomics only: this is a compare-and-swap loop on the
     * enclosing aligned 64-bit word that rewrites the other half with the value it read, so 32-bit operations on the
     * two halves of one word never disturb each other, and it is atomic with respect to every other atomic on the
     * word. Under contention it may take several round trips.
     *
     * @param dest  symmetric memory, 4-byte aligned, whose first 4 bytes are the word
     * @param value the addend
     * @param pe    the PE that owns the word
     * @return the word's value before the add
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException if dest is shorter than 4 bytes or not 4-byte aligned, the PE is out of range
     *                                  or the word is not in a live block (checked before anything is sent; nothing
     *                                  changes)
     * @throws MpException              if an operation or the job failed
     */
    public int atomicFetchAddInt(MemorySegment dest, int value, int pe) {
        return updateInt(queue, dest, pe, old -> old + value);
    }

    /**
     * Atomically adds to a 32-bit word (OpenSHMEM's {@code shmem_int_atomic_add}); see {@link #atomicFetchAddInt}.
     * Unlike the 64-bit add it is complete at the target when it returns (it is a loop of round trips).
     *
     * @param dest  symmetric memory, 4-byte aligned
     * @param value the addend
     * @param pe    the PE that owns the word
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAddInt}
     */
    public void atomicAddInt(MemorySegment dest, int value, int pe) {
        updateInt(queue, dest, pe, old -> old + value);
    }

    /**
     * Atomically adds one to a 32-bit word (OpenSHMEM's {@code shmem_int_atomic_inc}).
     *
     * @param dest symmetric memory, 4-byte aligned
     * @param pe   the PE that owns the word
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAddInt}
     */
    public void atomicIncInt(MemorySegment dest, int pe) {
        updateInt(queue, dest, pe, old -> old + 1);
    }

    /**
     * Atomically adds one to a 32-bit word and returns its old value (OpenSHMEM's {@code shmem_int_atomic_fetch_inc}).
     *
     * @param dest symmetric memory, 4-byte aligned
     * @param pe   the PE that owns the word
     * @return the word's value before the increment
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAddInt}
     */
    public int atomicFetchIncInt(MemorySegment dest, int pe) {
        return updateInt(queue, dest, pe, old -> old + 1);
    }

    /**
     * Atomically reads a 32-bit word (OpenSHMEM's {@code shmem_int_atomic_fetch}).
     *
     * @param source symmetric memory, 4-byte aligned
     * @param pe     the PE that owns the word
     * @return the word's value
     * @throws NullPointerException     if source is null
     * @throws IllegalArgumentException see {@link #atomicFetchAddInt}
     */
    public int atomicFetchInt(MemorySegment source, int pe) {
        long offset = targets.intTarget(source, pe);
        return halfOf(fetchWord(queue, pe, offset & -8L), offset);
    }

    /**
     * Atomically replaces a 32-bit word if it equals {@code cond} and returns its old value (OpenSHMEM's
     * {@code shmem_int_atomic_compare_swap}).
     *
     * @param dest  symmetric memory, 4-byte aligned
     * @param cond  the expected value
     * @param value the value stored when the word equals {@code cond}
     * @param pe    the PE that owns the word
     * @return the word's value before the operation: the swap happened exactly when it equals {@code cond}
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAddInt}
     */
    public int atomicCompareSwapInt(MemorySegment dest, int cond, int value, int pe) {
        return updateInt(queue, dest, pe, old -> old == cond ? value : old);
    }

    /**
     * Atomically replaces a 32-bit word and returns its old value (OpenSHMEM's {@code shmem_int_atomic_swap}).
     *
     * @param dest  symmetric memory, 4-byte aligned
     * @param value the new value
     * @param pe    the PE that owns the word
     * @return the word's value before the swap
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAddInt}
     */
    public int atomicSwapInt(MemorySegment dest, int value, int pe) {
        return updateInt(queue, dest, pe, old -> value);
    }

    /**
     * Atomically writes a 32-bit word (OpenSHMEM's {@code shmem_int_atomic_set}).
     *
     * @param dest  symmetric memory, 4-byte aligned
     * @param value the new value
     * @param pe    the PE that owns the word
     * @throws NullPointerException     if dest is null
     * @throws IllegalArgumentException see {@link #atomicFetchAddInt}
     */
    public void atomicSetInt(MemorySegment dest, int value, int pe) {
        updateInt(queue, dest, pe, old -> value);
    }

    // ---- put with signal ----

    /**
     * Puts bytes, then updates a signal word at the same PE (OpenSHMEM's {@code shmem_putmem_signal}); returns once
     * {@code source} may be reused. Whoever sees the signal's new value (with {@link #signalWaitUntil}, {@link
     * #waitUntil} or any acquiring read) sees the data: the signal travels on the same queue pair after the data, and
     * the software NIC executes a queue pair's requests one at a time in order (on other providers a quiet separates
     * them). Both are complete at the target by the next {@link #quiet}.
     *
     * @param dest    symmetric memory naming the target; {@code source.byteSize()} bytes are written from its start
     * @param source  the data, any memory (may be empty: then only the signal is sent)
     * @param sigAddr symmetric memory, 8-byte aligned, whose first 8 bytes are the signal word
     * @param signal  the value stored or added
     * @param sigOp   {@link ShmemSignalOp#SET} or {@link ShmemSignalOp#ADD}
     * @param pe      the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the PE is out of range, the target range or the signal word is not inside
     *                                  a live block, or the signal word is misaligned (nothing is sent)
     * @throws MpException              if the job failed
     */
    public void putSignal(MemorySegment dest, MemorySegment source, MemorySegment sigAddr, long signal,
                          ShmemSignalOp sigOp, int pe) {
        putSignal(queue, dest, source, sigAddr, signal, sigOp, pe);
    }

    /**
     * Non-blocking put with signal (OpenSHMEM's {@code shmem_putmem_signal_nbi}): as {@link #putSignal}, whose source
     * is copied before it returns too.
     *
     * @param dest    symmetric memory naming the target
     * @param source  the data
     * @param sigAddr the symmetric signal word
     * @param signal  the value stored or added
     * @param sigOp   SET or ADD
     * @param pe      the target PE
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link #putSignal}
     */
    public void putSignalNbi(MemorySegment dest, MemorySegment source, MemorySegment sigAddr, long signal,
                             ShmemSignalOp sigOp, int pe) {
        putSignal(queue, dest, source, sigAddr, signal, sigOp, pe);
    }

    /**
     * Waits until this PE's signal word satisfies a comparison and returns the value that did (OpenSHMEM's
     * {@code shmem_signal_wait_until}). The data put before the signal is visible when it returns.
     *
     * @param sigAddr symmetric memory of this PE, 8-byte aligned
     * @param cmp     the comparison
     * @param value   the operand
     * @return the signal's value that satisfied the comparison
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if sigAddr is not an aligned word in a live block
     * @throws MpException              see {@link #waitUntil}
     */
    public long signalWaitUntil(MemorySegment sigAddr, ShmemCmp cmp, long value) {
        return waits.signalWaitUntil(sigAddr, cmp, value);
    }

    /**
     * Reads this PE's signal word with acquire semantics (OpenSHMEM's {@code shmem_signal_fetch}).
     *
     * @param sigAddr symmetric memory of this PE, 8-byte aligned
     * @return its value
     * @throws NullPointerException     if sigAddr is null
     * @throws IllegalArgumentException if sigAddr is not an aligned word in a live block
     */
    public long signalFetch(MemorySegment sigAddr) {
        return waits.signalFetch(sigAddr);
    }

    // ---- on streams (the SA model) ----

    /**
     * A put rung by a stream when it gets there (NVSHMEM's {@code nvshmemx_putmem_on_stream}): the CPU only prepares
     * it. The source must be symmetric memory of this PE (registered already, as the NIC reads it when the stream
     * rings), and is read then: write it in the stream's order, not the CPU's. The data is at the target once a later
     * {@link #quietOnStream} has passed on the stream. To this PE itself it is a copy run by the stream.
     *
     * <p>A CPU operation (put, atomic, ...) to a PE is refused while puts to it that a stream will ring are waiting
     * for that stream (the queue pair's order would break): synchronise the stream first.
     *
     * @param dest   symmetric memory naming the target; {@code source.byteSize()} bytes are written
     * @param source symmetric memory of this PE, inside one live block
     * @param pe     the target PE
     * @param stream the stream (a host stream, or a CUDA stream)
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the PE is out of range, or dest's or source's range is not inside one live
     *                                  block (nothing is queued)
     * @throws IllegalStateException    if the stream is closed, or this runtime is
     * @throws MpException              if the job failed
     */
    public void putOnStream(MemorySegment dest, MemorySegment source, int pe, Stream stream) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        Objects.requireNonNull(stream, "stream must not be null");
        requireOpen();
        long from = targets.target(source, source.byteSize(), myPe(), "source");
        long to = targets.target(dest, source.byteSize(), pe, "dest");
        streams().put(to, from, source.byteSize(), pe, stream);
    }

    /**
     * A put with signal rung by a stream (NVSHMEM's {@code nvshmemx_putmem_signal_on_stream}): the data, then the
     * signal, on the queue pair to that PE in this order, so the data is visible before the signal (see
     * {@link #putSignal}). Source rules as {@link #putOnStream}.
     *
     * @param dest    symmetric memory naming the target
     * @param source  symmetric memory of this PE (may be empty: then only the signal is sent)
     * @param sigAddr symmetric memory, 8-byte aligned: the signal word
     * @param signal  the value stored or added
     * @param sigOp   SET or ADD
     * @param pe      the target PE
     * @param stream  the stream
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException see {@link #putOnStream} and {@link #putSignal}
     * @throws IllegalStateException    if the stream is closed, or this runtime is
     * @throws MpException              if the job failed
     */
    public void putSignalOnStream(MemorySegment dest, MemorySegment source, MemorySegment sigAddr, long signal,
                                  ShmemSignalOp sigOp, int pe, Stream stream) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        Objects.requireNonNull(sigOp, "sigOp must not be null");
        Objects.requireNonNull(stream, "stream must not be null");
        long sig = targets.atomicTarget(sigAddr, pe);
        long bytes = source.byteSize();
        long to = targets.target(dest, bytes, pe, "dest");
        long from = bytes == 0 ? 0 : targets.target(source, bytes, myPe(), "source");
        if (bytes > 0) {
            streams().put(to, from, bytes, pe, stream);
        }
        if (!orderedNic) {
            streams().quiet(stream);
        }
        streams().signal(sig, signal, sigOp, pe, stream);
    }

    /**
     * Makes a stream wait until every operation it rang for this runtime is complete at its target (NVSHMEM's
     * {@code nvshmemx_quiet_on_stream}); the CPU goes on at once.
     *
     * @param stream the stream
     * @throws NullPointerException  if stream is null
     * @throws IllegalStateException if the stream is closed, or this runtime is
     */
    public void quietOnStream(Stream stream) {
        Objects.requireNonNull(stream, "stream must not be null");
        requireOpen();
        streams().quiet(stream);
    }

    /**
     * A barrier of every PE run by a stream (NVSHMEM's {@code nvshmemx_barrier_all_on_stream}): the stream completes
     * what it rang, adds one to every other PE's barrier counter, and waits until every other PE's add for this
     * barrier arrived. Every PE calls it on one stream each, as often as the others. It does not wait for operations
     * the CPU issued: {@link #quiet} those first.
     *
     * @param stream the stream
     * @throws NullPointerException  if stream is null
     * @throws IllegalStateException if the stream is closed, or this runtime is
     * @throws MpException           if the job failed
     */
    public void barrierAllOnStream(Stream stream) {
        Objects.requireNonNull(stream, "stream must not be null");
        requireOpen();
        streams().barrierAll(streamBarrier, stream);
    }

    /**
     * Makes a stream wait until this PE's signal word satisfies a comparison (NVSHMEM's
     * {@code nvshmemx_signal_wait_until_on_stream}). Stream waits compare 32-bit words: the signal's low 32 bits are
     * compared, EQ exactly and GE as a counter that may wrap ({@code (int) (signal - value) >= 0}); use signal values
     * that differ by less than 2^31 from what is waited for.
     *
     * @param sigAddr symmetric memory of this PE, 8-byte aligned
     * @param cmp     {@link ShmemCmp#EQ} or {@link ShmemCmp#GE}
     * @param value   the operand
     * @param stream  the stream
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the comparison is another, or sigAddr is not an aligned word in a live block
     * @throws IllegalStateException    if the stream is closed, or this runtime is
     */
    public void signalWaitUntilOnStream(MemorySegment sigAddr, ShmemCmp cmp, long value, Stream stream) {
        Objects.requireNonNull(cmp, "cmp must not be null");
        Objects.requireNonNull(stream, "stream must not be null");
        long offset = targets.atomicTarget(sigAddr, myPe());
        if (cmp != ShmemCmp.EQ && cmp != ShmemCmp.GE) {
            throw new IllegalArgumentException("a stream waits for EQ or GE only (32-bit stream waits), not " + cmp);
        }
        streams().waitWord(offset, cmp, value, stream);
    }

    private StreamRma streams() {
        if (streams == null) {
            streams = new StreamRma(mp, window, heapMemory);
        }
        return streams;
    }

    // ---- ordering, completion, synchronisation ----

    /**
     * Orders this PE's puts, {@code p}s and atomics to each PE (OpenSHMEM's {@code shmem_fence}): those issued after
     * the fence are visible at a PE after those issued before it. Free on the software NIC (see the class comment);
     * a {@link #quiet} on other providers.
     *
     * @throws MpException if the job failed
     */
    public void fence() {
        requireOpen();
        if (!orderedNic) {
            queue.quiet();
        }
    }

    /**
     * Completes every operation of this PE in flight (OpenSHMEM's {@code shmem_quiet}): puts and atomics are in their
     * targets' memory, non-blocking gets have filled their destinations.
     *
     * @throws MpException if an operation failed (the others are still completed first) or the job failed
     */
    public void quiet() {
        requireOpen();
        queue.quiet();
    }

    /**
     * Completes this PE's operations and waits for every PE (OpenSHMEM's {@code shmem_barrier_all}): after it, every
     * PE's puts issued before it are visible everywhere. The wait is the Mp's barrier, run by its bootstrap.
     *
     * @throws MpException                                   if an operation in flight failed, or the job failed
     *                                                       while one was completed (the barrier is then not
     *                                                       entered)
     * @throws dev.gdasync.libmp.bootstrap.BootstrapException if the barrier itself fails: the job failed (a PE
     *                                                       aborted or its process is gone), the bootstrap was
     *                                                       closed, or its timeout passed
     * @throws IllegalStateException                         if this runtime or its Mp is closed, or a KI launch is
     *                                                       prepared
     */
    public void barrierAll() {
        quietAll();
        mp.barrier();
    }

    /**
     * Waits for every PE without completing operations in flight (OpenSHMEM's {@code shmem_sync_all}).
     *
     * @throws dev.gdasync.libmp.bootstrap.BootstrapException see {@link #barrierAll}
     * @throws IllegalStateException                         see {@link #barrierAll}
     */
    public void syncAll() {
        requireOpen();
        mp.barrier();
    }

    /**
     * Waits until a 64-bit word of this PE's heap satisfies a comparison (OpenSHMEM's
     * {@code shmem_long_wait_until}), reading it with acquire semantics: what the writer put before the word is
     * visible after the wait returns.
     *
     * @param ivar  symmetric memory of this PE, 8-byte aligned, whose first 8 bytes are the word
     * @param cmp   the comparison
     * @param value the operand
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if ivar is not an aligned word in a live block
     * @throws MpException              if the job failed meanwhile, or the word did not satisfy the comparison within
     *                                  the Mp's wait timeout (the message names the word, the comparison and the
     *                                  last value seen)
     */
    public void waitUntil(MemorySegment ivar, ShmemCmp cmp, long value) {
        Objects.requireNonNull(cmp, "cmp must not be null");
        signalWaitUntil(ivar, cmp, value);
    }

    /**
     * Tests once whether a 64-bit word of this PE's heap satisfies a comparison (OpenSHMEM's {@code shmem_long_test}).
     *
     * @param ivar  symmetric memory of this PE, 8-byte aligned
     * @param cmp   the comparison
     * @param value the operand
     * @return whether it holds now
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if ivar is not an aligned word in a live block
     */
    public boolean test(MemorySegment ivar, ShmemCmp cmp, long value) {
        return waits.test(ivar, cmp, value);
    }

    /**
     * Waits until every word of an array not excluded by {@code status} satisfies a comparison (OpenSHMEM's
     * {@code shmem_long_wait_until_all}).
     *
     * @param ivars  symmetric memory of this PE: consecutive 8-byte-aligned 64-bit words ({@code byteSize / 8} of
     *               them)
     * @param status null, or one entry per word: a non-zero entry leaves its word out
     * @param cmp    the comparison
     * @param value  the operand
     * @throws NullPointerException     if ivars or cmp is null
     * @throws IllegalArgumentException if ivars is not whole aligned words in one live block, or status has another
     *                                  length
     * @throws MpException              see {@link #waitUntil}
     */
    public void waitUntilAll(MemorySegment ivars, int[] status, ShmemCmp cmp, long value) {
        waits.waitUntilAll(ivars, status, cmp, value);
    }

    /**
     * Waits until some word of an array not excluded by {@code status} satisfies a comparison and returns its index
     * (OpenSHMEM's {@code shmem_long_wait_until_any}): the lowest such index when several do.
     *
     * @param ivars  consecutive 64-bit words of this PE's heap (see {@link #waitUntilAll})
     * @param status null, or one entry per word: a non-zero entry leaves its word out
     * @param cmp    the comparison
     * @param value  the operand
     * @return the index of a word that satisfied it, or -1 at once if every word is left out (or there are none)
     * @throws NullPointerException     if ivars or cmp is null
     * @throws IllegalArgumentException see {@link #waitUntilAll}
     * @throws MpException              see {@link #waitUntil}
     */
    public int waitUntilAny(MemorySegment ivars, int[] status, ShmemCmp cmp, long value) {
        return waits.waitUntilAny(ivars, status, cmp, value);
    }

    /**
     * Waits until at least one word of an array not excluded by {@code status} satisfies a comparison, and returns
     * the indices of all that do (OpenSHMEM's {@code shmem_long_wait_until_some}).
     *
     * @param ivars   consecutive 64-bit words of this PE's heap (see {@link #waitUntilAll})
     * @param indices receives the indices, ascending; at least as long as the array of words
     * @param status  null, or one entry per word: a non-zero entry leaves its word out
     * @param cmp     the comparison
     * @param value   the operand
     * @return how many indices were written, 0 at once if every word is left out
     * @throws NullPointerException     if ivars, indices or cmp is null
     * @throws IllegalArgumentException see {@link #waitUntilAll}, or indices is shorter than the array
     * @throws MpException              see {@link #waitUntil}
     */
    public int waitUntilSome(MemorySegment ivars, int[] indices, int[] status, ShmemCmp cmp, long value) {
        return waits.waitUntilSome(ivars, indices, status, cmp, value);
    }

    /**
     * Tests once whether every word not excluded satisfies a comparison (OpenSHMEM's {@code shmem_long_test_all}).
     *
     * @param ivars  consecutive 64-bit words of this PE's heap (see {@link #waitUntilAll})
     * @param status null, or one entry per word: a non-zero entry leaves its word out
     * @param cmp    the comparison
     * @param value  the operand
     * @return whether all of them do now (true when every word is left out)
     * @throws NullPointerException     if ivars or cmp is null
     * @throws IllegalArgumentException see {@link #waitUntilAll}
     */
    public boolean testAll(MemorySegment ivars, int[] status, ShmemCmp cmp, long value) {
        return waits.testAll(ivars, status, cmp, value);
    }

    /**
     * Tests once whether some word not excluded satisfies a comparison (OpenSHMEM's {@code shmem_long_test_any}).
     *
     * @param ivars  consecutive 64-bit words of this PE's heap (see {@link #waitUntilAll})
     * @param status null, or one entry per word: a non-zero entry leaves its word out
     * @param cmp    the comparison
     * @param value  the operand
     * @return the lowest index of one that does now, or -1
     * @throws NullPointerException     if ivars or cmp is null
     * @throws IllegalArgumentException see {@link #waitUntilAll}
     */
    public int testAny(MemorySegment ivars, int[] status, ShmemCmp cmp, long value) {
        return waits.testAny(ivars, status, cmp, value);
    }

    /**
     * Tests once which words not excluded satisfy a comparison (OpenSHMEM's {@code shmem_long_test_some}).
     *
     * @param ivars   consecutive 64-bit words of this PE's heap (see {@link #waitUntilAll})
     * @param indices receives their indices, ascending; at least as long as the array of words
     * @param status  null, or one entry per word: a non-zero entry leaves its word out
     * @param cmp     the comparison
     * @param value   the operand
     * @return how many indices were written
     * @throws NullPointerException     if ivars, indices or cmp is null
     * @throws IllegalArgumentException see {@link #waitUntilSome}
     */
    public int testSome(MemorySegment ivars, int[] indices, int[] status, ShmemCmp cmp, long value) {
        return waits.testSome(ivars, indices, status, cmp, value);
    }

    /**
     * Leaves (OpenSHMEM's {@code shmem_finalize}); collective: completes this PE's operations, waits for every PE,
     * then releases the heap. After the job failed it releases at once. Closing twice does nothing. The Mp stays open.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            if (ki != null) {
                ki.complete();
            }
            if (mp.failure() == null) {
                if (streams != null) {
                    streams.reapAll();
                }
                barrierAll();
                mp.windowDestroy(window);
            }
        } finally {
            closed = true;
            if (streams != null) {
                streams.close();
            }
            for (ShmemCtx c : List.copyOf(contexts)) {
                c.release();
            }
            queue.close();
            mp.free(heapMemory);
        }
    }

    @Override
    public String toString() {
        return "Shmem{PE " + myPe() + " of " + nPes() + ", heap " + heapSize() + " bytes, " + heap.liveBlocks()
                + " blocks}";
    }

    // ---- internals ----

    /** Takes a block of {@code bytes >= 1} from the heap, after the agreement: the same offset on every PE. */
    private MemorySegment allocate(long bytes) {
        long at = heap.allocate(bytes);
        if (at < 0) {
            throw new IllegalStateException("the symmetric heap has no free range of " + bytes + " bytes: its largest is "
                    + heap.largestFree() + " of " + heapSize() + " (set a larger heap at init)");
        }
        return heapMemory.asSlice(at, bytes);
    }

    /** Completes the default context's operations and every other context's; the first failure is thrown. */
    private void quietAll() {
        requireOpen();
        RuntimeException first = null;
        for (ShmemCtx c : contexts) {
            try {
                c.queue().quiet();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        queue.quiet();
        if (first != null) {
            throw first;
        }
    }

    /** Whether a fence needs no completion on this NIC (its queue pairs run their requests in order). */
    boolean orderedNic() {
        return orderedNic;
    }

    long fetchAdd(RmaQueue q, MemorySegment dest, long value, int pe) {
        long offset = targets.atomicTarget(dest, pe);
        if (pe == myPe()) {
            return (long) LONG.getAndAdd(heapMemory, offset, value);
        }
        return q.fetchAdd(pe, offset, value);
    }

    void add(RmaQueue q, MemorySegment dest, long value, int pe) {
        long offset = targets.atomicTarget(dest, pe);
        if (pe == myPe()) {
            LONG.getAndAdd(heapMemory, offset, value);
        } else {
            q.add(pe, offset, value);
        }
    }

    long swap(RmaQueue q, MemorySegment dest, long value, int pe) {
        long offset = targets.atomicTarget(dest, pe);
        if (pe == myPe()) {
            return (long) LONG.getAndSet(heapMemory, offset, value);
        }
        long seen = q.fetchAdd(pe, offset, 0);
        while (true) {
            long old = q.compareSwap(pe, offset, seen, value);
            if (old == seen) {
                return old;
            }
            seen = old;
        }
    }

    long compareSwap(RmaQueue q, MemorySegment dest, long cond, long value, int pe) {
        return compareSwapWord(q, pe, targets.atomicTarget(dest, pe), cond, value);
    }

    /** @return the 64-bit word at a checked heap offset of a PE, read atomically */
    long fetchWord(RmaQueue q, int pe, long offset) {
        return pe == myPe() ? (long) LONG.getVolatile(heapMemory, offset) : q.fetchAdd(pe, offset, 0);
    }

    /** @return the old value of the 64-bit word at a checked heap offset of a PE after a compare-and-swap */
    long compareSwapWord(RmaQueue q, int pe, long offset, long cond, long value) {
        return pe == myPe() ? (long) LONG.compareAndExchange(heapMemory, offset, cond, value)
                : q.compareSwap(pe, offset, cond, value);
    }

    /**
     * A 32-bit atomic: compare-and-swap loop on the enclosing aligned 64-bit word, keeping the other half as read.
     * When the update leaves the word as it is (a compare-swap that fails, a swap to the same value), the atomic read
     * that saw it is the operation and nothing is written.
     *
     * @return the 32-bit word's value before the update
     */
    int updateInt(RmaQueue q, MemorySegment dest, int pe, IntUnaryOperator update) {
        long offset = targets.intTarget(dest, pe);
        long word = offset & -8L;
        int shift = halfShift(offset);
        long mask = 0xffff_ffffL << shift;
        long seen = fetchWord(q, pe, word);
        while (true) {
            int old = (int) (seen >>> shift);
            long next = (seen & ~mask) | ((update.applyAsInt(old) & 0xffff_ffffL) << shift);
            if (next == seen) {
                return old;
            }
            long was = compareSwapWord(q, pe, word, seen, next);
            if (was == seen) {
                return old;
            }
            seen = was;
        }
    }

    /** @return the 32-bit half of a 64-bit word that holds the int at {@code offset} */
    private static int halfOf(long word, long offset) {
        return (int) (word >>> halfShift(offset));
    }

    /** @return where the int at {@code offset} sits in its enclosing 64-bit word, in bits, for this byte order */
    private static int halfShift(long offset) {
        boolean upperAddress = (offset & 4) != 0;
        return upperAddress == (java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN) ? 32 : 0;
    }

    /** Data, then the signal, through one queue: every check first, so that bad input sends nothing. */
    void putSignal(RmaQueue q, MemorySegment dest, MemorySegment source, MemorySegment sigAddr, long signal,
                   ShmemSignalOp sigOp, int pe) {
        Objects.requireNonNull(dest, "dest must not be null");
        Objects.requireNonNull(source, "source must not be null");
        Objects.requireNonNull(sigOp, "sigOp must not be null");
        long sig = targets.atomicTarget(sigAddr, pe);
        targets.target(dest, source.byteSize(), pe, "dest");
        if (source.byteSize() > 0) {
            putBytes(q, dest, source, pe);
        }
        if (pe == myPe()) {
            // The copy above is ordered before this release store or atomic for any acquiring reader of the word.
            if (sigOp == ShmemSignalOp.SET) {
                LONG.setRelease(heapMemory, sig, signal);
            } else {
                LONG.getAndAdd(heapMemory, sig, signal);
            }
            return;
        }
        if (!orderedNic) {
            q.quiet();
        }
        if (sigOp == ShmemSignalOp.SET) {
            q.put(MemorySegment.ofArray(new long[] {signal}), pe, sig);
        } else {
            q.add(pe, sig, signal);
        }
    }

    private void putBytes(MemorySegment dest, MemorySegment source, int pe) {
        putBytes(queue, dest, source, pe);
    }

    /** A put through a context's queue, after the checks: own PE a copy, else staged pieces. */
    void putBytes(RmaQueue q, MemorySegment dest, MemorySegment source, int pe) {
        requireOpen();
        long len = source.byteSize();
        long offset = targets.target(dest, len, pe, "dest");
        if (pe == myPe()) {
            MemorySegment.copy(source, 0, heapMemory, offset, len);
            return;
        }
        long piece = q.pieceBytes();
        for (long done = 0; done < len; done += piece) {
            long n = Math.min(piece, len - done);
            q.put(source.asSlice(done, n), pe, offset + done);
        }
    }

    private void getBytes(MemorySegment dest, MemorySegment source, int pe) {
        getBytes(queue, dest, source, pe);
    }

    /** A get through a context's queue, after the checks; remote gets fill {@code dest} when the queue completes. */
    void getBytes(RmaQueue q, MemorySegment dest, MemorySegment source, int pe) {
        requireOpen();
        long len = dest.byteSize();
        long offset = targets.target(source, len, pe, "source");
        if (dest.isReadOnly()) {
            throw new IllegalArgumentException("dest is read-only");
        }
        if (pe == myPe()) {
            MemorySegment.copy(heapMemory, offset, dest, 0, len);
            return;
        }
        long piece = q.pieceBytes();
        for (long done = 0; done < len; done += piece) {
            long n = Math.min(piece, len - done);
            q.get(dest.asSlice(done, n), pe, offset + done);
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this Shmem runtime is closed");
        }
        if (ki != null) {
            throw new IllegalStateException("a KI launch is prepared (kiPrepare): complete it (ShmemKi.complete) before"
                    + " other calls, whose posts would ring the queue pairs past slots the kernel has not patched yet");
        }
    }

    private static long roundUp(long bytes) {
        return (bytes + SymmetricHeap.ALIGNMENT - 1) & -SymmetricHeap.ALIGNMENT;
    }
}
