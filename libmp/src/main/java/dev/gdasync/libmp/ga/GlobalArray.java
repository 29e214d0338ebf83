package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.MpWindow;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A distributed 1- to 3-dimensional array of {@link GaType} elements (GA's global array, CoGA's {@code coGA} array):
 * each rank stores its {@link Distribution} block in a window; patches are read and written by index range with
 * inclusive bounds, the caller's own block by memory copy, every other owner's part by one-sided transfers.
 *
 * <p><b>Buffers.</b> A patch {@code lo..hi} travels to or from a caller's buffer laid out row-major with leading
 * dimensions {@code ld} (GA's C convention): {@code ld[k]} is the buffer's extent in dimension {@code k + 1}, at least
 * the patch's; element {@code (i, j, l)} of a 3-D patch is at element offset {@code ((i * ld[0]) + j) * ld[1] + l}. A
 * null {@code ld} means the patch's own extents (a dense buffer). Buffers may be heap or native segments; a slice of
 * a {@link GaBuffer} moves without a staging copy.
 *
 * <p><b>Consistency</b> (GA's and CoGA's): this rank's operations on overlapping patches of one array happen in call
 * order; operations on disjoint patches, or by different ranks, are not ordered except by {@link GlobalArrays#sync()}.
 * Accumulates are atomic per element with respect to every other accumulate (see {@link #acc}); puts and gets racing
 * with them, as in GA, are not.
 *
 * <p>Created by {@link GlobalArrays#create}; owned by the runtime's thread.
 */
public final class GlobalArray {
    private final GlobalArrays runtime;
    private final String name;
    private final GaType type;
    private final Distribution distribution;
    private final GaPatch[] blocks;
    private final MemorySegment memory;
    private final MpWindow window;
    private boolean destroyed;
    private int accessed;

    /** Made by {@link GlobalArrays#create} once every rank agreed and has its zero-filled window memory. */
    GlobalArray(GlobalArrays runtime, String name, GaType type, Distribution distribution, MemorySegment memory,
                MpWindow window) {
        this.runtime = runtime;
        this.name = name;
        this.type = type;
        this.distribution = distribution;
        this.blocks = new GaPatch[distribution.ranks()];
        for (int r = 0; r < blocks.length; r++) {
            blocks[r] = distribution.block(r);
        }
        this.memory = memory;
        this.window = window;
    }

    /** @return the array's name */
    public String name() {
        return name;
    }

    /** @return the element type */
    public GaType type() {
        return type;
    }

    /** @return how the array is split over the ranks */
    public Distribution distribution() {
        return distribution;
    }

    /** @return the number of dimensions */
    public int ndim() {
        return distribution.ndim();
    }

    /** @return the extent of each dimension (a copy) */
    public int[] dims() {
        return distribution.dims();
    }

    /** @return whether {@link #destroy()} ended the array */
    public boolean isDestroyed() {
        return destroyed;
    }

    /**
     * The block a rank owns (GA's {@code NGA_Distribution}), inclusive bounds; a rank that holds nothing gets an
     * empty patch ({@link GaPatch#isEmpty()}).
     *
     * @param rank a rank
     * @return its block
     * @throws IllegalArgumentException if the rank is out of range
     * @throws IllegalStateException    if the array was destroyed
     */
    public GaPatch distribution(int rank) {
        requireLive();
        if (rank < 0 || rank >= blocks.length) {
            throw new IllegalArgumentException("rank " + rank + " is out of range: ranks are 0.." + (blocks.length - 1));
        }
        return blocks[rank];
    }

    /**
     * The owner of an element (GA's {@code NGA_Locate}).
     *
     * @param subscript one index per dimension
     * @return the owning rank
     * @throws NullPointerException     if subscript is null
     * @throws IllegalArgumentException if it has the wrong length or lies outside the array
     * @throws IllegalStateException    if the array was destroyed
     */
    public int locate(int... subscript) {
        requireLive();
        return distribution.owner(subscript);
    }

    /**
     * The owners of a patch with their parts, in rank order (GA's {@code NGA_Locate_region}).
     *
     * @param lo first indices
     * @param hi last indices, inclusive
     * @return the parts
     * @throws NullPointerException     if lo or hi is null
     * @throws IllegalArgumentException if the patch is out of bounds
     * @throws IllegalStateException    if the array was destroyed
     */
    public List<GaPatch> locateRegion(int[] lo, int[] hi) {
        requireLive();
        return distribution.owners(lo, hi);
    }

    /**
     * Writes a patch from a buffer (GA's {@code NGA_Put}, CoGA's {@code coGA_Put}); returns with the buffer reusable
     * and the data at its owners.
     *
     * @param lo  first indices of the patch
     * @param hi  last indices, inclusive
     * @param buf the elements, laid out by {@code ld}
     * @param ld  the buffer's leading dimensions ({@code ndim - 1} of them), or null for a dense buffer
     * @throws NullPointerException     if lo, hi or buf is null
     * @throws IllegalArgumentException if the patch is out of bounds, ld is wrong or the buffer is too small
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if a transfer failed
     */
    public void put(int[] lo, int[] hi, MemorySegment buf, int[] ld) {
        runtime.nbWait(nbPut(lo, hi, buf, ld));
    }

    /**
     * Reads a patch into a buffer (GA's {@code NGA_Get}, CoGA's {@code coGA_Get}).
     *
     * @param lo  first indices of the patch
     * @param hi  last indices, inclusive
     * @param buf where the elements land, laid out by {@code ld}; writable
     * @param ld  the buffer's leading dimensions, or null for a dense buffer
     * @throws NullPointerException     if lo, hi or buf is null
     * @throws IllegalArgumentException if the patch is out of bounds, ld is wrong, or the buffer is too small or
     *                                  read-only
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if a transfer failed
     */
    public void get(int[] lo, int[] hi, MemorySegment buf, int[] ld) {
        runtime.nbWait(nbGet(lo, hi, buf, ld));
    }

    /**
     * Adds a scaled buffer to a patch: {@code patch += alpha * buf} (GA's {@code NGA_Acc}). Atomic per element with
     * respect to every other accumulate, by a lock per owner and array: each rank's window starts with a lock word
     * that an accumulate takes with a compare-and-swap (the NIC's for other owners, the CPU's for this rank's block),
     * then reads the owner's part, adds and writes it back, and frees the word; one owner's lock at a time, so
     * accumulates cannot deadlock. A rank that dies holding a lock makes the others' accumulates on that owner fail
     * once the job's failure is known, or after the Mp's wait timeout.
     *
     * @param lo    first indices of the patch
     * @param hi    last indices, inclusive
     * @param buf   the addends, laid out by {@code ld}
     * @param ld    the buffer's leading dimensions, or null for a dense buffer
     * @param alpha the scale factor; an integer for {@link GaType#INT} and {@link GaType#LONG} arrays
     * @throws NullPointerException     if lo, hi or buf is null
     * @throws IllegalArgumentException if the patch is out of bounds, ld is wrong, the buffer is too small, or alpha
     *                                  is not finite or (for integer arrays) not an integer
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if a transfer failed or a lock could not be taken
     */
    public void acc(int[] lo, int[] hi, MemorySegment buf, int[] ld, double alpha) {
        RunList runs = plan(lo, hi, buf, ld, false);
        type.checkScale(alpha, "alpha");
        runtime.accumulate(this, runs, buf, alpha, lo.clone(), hi.clone());
    }

    /**
     * Starts a put (GA's {@code NGA_NbPut}): this rank's part is written and the buffer copied to staging (unless it is
     * a {@link GaBuffer}) before it returns; complete it with {@link GlobalArrays#nbWait}. A {@link GaBuffer} must not
     * change until then.
     *
     * @param lo  first indices of the patch
     * @param hi  last indices, inclusive
     * @param buf the elements, laid out by {@code ld}
     * @param ld  the buffer's leading dimensions, or null for a dense buffer
     * @return the handle
     * @throws NullPointerException     if lo, hi or buf is null
     * @throws IllegalArgumentException if the patch is out of bounds, ld is wrong or the buffer is too small
     * @throws IllegalStateException    if the array was destroyed
     */
    public GaHandle nbPut(int[] lo, int[] hi, MemorySegment buf, int[] ld) {
        RunList runs = plan(lo, hi, buf, ld, false);
        return runtime.startPut(this, runs, buf, lo.clone(), hi.clone());
    }

    /**
     * Starts a get (GA's {@code NGA_NbGet}); the buffer holds the patch once {@link GlobalArrays#nbWait} returned.
     *
     * @param lo  first indices of the patch
     * @param hi  last indices, inclusive
     * @param buf where the elements land, laid out by {@code ld}; writable
     * @param ld  the buffer's leading dimensions, or null for a dense buffer
     * @return the handle
     * @throws NullPointerException     if lo, hi or buf is null
     * @throws IllegalArgumentException if the patch is out of bounds, ld is wrong, or the buffer is too small or
     *                                  read-only
     * @throws IllegalStateException    if the array was destroyed
     */
    public GaHandle nbGet(int[] lo, int[] hi, MemorySegment buf, int[] ld) {
        RunList runs = plan(lo, hi, buf, ld, true);
        return runtime.startGet(this, runs, buf, lo.clone(), hi.clone());
    }

    /**
     * An accumulate through a handle (GA's {@code NGA_NbAcc}). It completes before it returns, and the handle comes
     * back done: the accumulate lock of an owner is never held across calls, since a lock left held while the caller
     * computes would stall every other rank's accumulates on that owner.
     *
     * @param lo    first indices of the patch
     * @param hi    last indices, inclusive
     * @param buf   the addends, laid out by {@code ld}
     * @param ld    the buffer's leading dimensions, or null for a dense buffer
     * @param alpha the scale factor
     * @return a completed handle
     * @throws NullPointerException     if lo, hi or buf is null
     * @throws IllegalArgumentException as {@link #acc} does
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if a transfer failed or a lock could not be taken
     */
    public GaHandle nbAcc(int[] lo, int[] hi, MemorySegment buf, int[] ld, double alpha) {
        acc(lo, hi, buf, ld, alpha);
        GaHandle h = new GaHandle(this, lo.clone(), hi.clone());
        h.done = true;
        return h;
    }

    /**
     * Atomically adds to an integer element and returns its previous value (GA's {@code NGA_Read_inc}): a {@link
     * GaType#LONG} element by the NIC's fetch-and-add (a CPU atomic on this rank's block), an {@link GaType#INT} element
     * by compare-and-swap on its 8-byte word. Atomic with respect to every other readInc.
     *
     * @param increment what is added (an INT element wraps as Java int arithmetic does)
     * @param subscript the element
     * @return the element's value before the add
     * @throws NullPointerException     if subscript is null
     * @throws IllegalArgumentException if the array is not INT or LONG, or the subscript is wrong
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if the transfer failed
     */
    public long readInc(long increment, int... subscript) {
        requireLive();
        if (!type.isInteger()) {
            throw new IllegalArgumentException("readInc needs an INT or LONG array; '" + name + "' is " + type);
        }
        distribution.checkSubscript(subscript, "subscript");
        if (type == GaType.INT && (increment < Integer.MIN_VALUE || increment > Integer.MAX_VALUE)) {
            throw new IllegalArgumentException("increment " + increment + " does not fit an INT element");
        }
        int owner = distribution.owner(subscript);
        runtime.orderAfter(this, subscript, subscript);
        return runtime.readInc(this, owner, offsetInBlock(owner, subscript) * type.bytes(), increment);
    }

    /**
     * Writes single elements (GA's {@code NGA_Scatter}): element {@code i} of {@code values} goes to
     * {@code subscripts[i]}; if two name the same element, the later one wins.
     *
     * @param values     the elements, densely packed
     * @param subscripts one subscript per element
     * @throws NullPointerException     if an argument or a subscript is null
     * @throws IllegalArgumentException if a subscript is wrong or values is too short
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if a transfer failed
     */
    public void scatter(MemorySegment values, int[][] subscripts) {
        RunList runs = planElements(values, subscripts, false);
        int[][] box = box(subscripts);
        runtime.nbWait(runtime.startPut(this, runs, values, box[0], box[1]));
    }

    /**
     * Reads single elements (GA's {@code NGA_Gather}): element {@code i} of {@code values} receives
     * {@code subscripts[i]}.
     *
     * @param subscripts one subscript per element
     * @param values     where the elements land, densely packed; writable
     * @throws NullPointerException     if an argument or a subscript is null
     * @throws IllegalArgumentException if a subscript is wrong, or values is too short or read-only
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if a transfer failed
     */
    public void gather(int[][] subscripts, MemorySegment values) {
        RunList runs = planElements(values, subscripts, true);
        int[][] box = box(subscripts);
        runtime.nbWait(runtime.startGet(this, runs, values, box[0], box[1]));
    }

    /**
     * Direct access to this rank's block (GA's {@code NGA_Access}); pair it with {@link #release()}. Other ranks may
     * read and write the block meanwhile: order with them by {@link GlobalArrays#sync()}.
     *
     * @return the block's memory and index range
     * @throws IllegalStateException if the array was destroyed
     */
    public LocalBlock access() {
        requireLive();
        accessed++;
        return new LocalBlock(local().asSlice(GlobalArrays.HEADER, blocks[runtime.rank()].elements() * type.bytes()),
                blocks[runtime.rank()]);
    }

    /**
     * Ends an {@link #access()} (GA's {@code NGA_Release}).
     *
     * @throws IllegalStateException if the array was destroyed or is not accessed
     */
    public void release() {
        requireLive();
        if (accessed == 0) {
            throw new IllegalStateException("release() without access() on array '" + name + "'");
        }
        accessed--;
    }

    /**
     * Sets every element to zero (GA's {@code GA_Zero}); collective, with a sync before and after.
     *
     * @throws IllegalStateException if the array was destroyed
     * @throws MpException           if the job failed
     */
    public void zero() {
        fill(0L);
    }

    /**
     * Sets every element to a value (GA's {@code GA_Fill}); collective, with a sync before and after. Floating types
     * take it as {@code (double) value}.
     *
     * @param value the value; for an INT array, within int's range
     * @throws IllegalArgumentException if the value does not fit an INT array
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if the job failed
     */
    public void fill(long value) {
        requireLive();
        if (type == GaType.INT && (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE)) {
            throw new IllegalArgumentException("value " + value + " does not fit an INT array");
        }
        fillLocal(value, value);
    }

    /**
     * Sets every element to a value; collective, with a sync before and after.
     *
     * @param value the value; for INT and LONG arrays an integer in their range
     * @throws IllegalArgumentException if the value does not fit the type
     * @throws IllegalStateException    if the array was destroyed
     * @throws MpException              if the job failed
     */
    public void fill(double value) {
        requireLive();
        type.checkScale(value, "value");
        if (type == GaType.INT && (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE)) {
            throw new IllegalArgumentException("value " + value + " does not fit an INT array");
        }
        fillLocal((long) value, value);
    }

    private void fillLocal(long asLong, double asDouble) {
        runtime.sync();
        type.fill(local().asSlice(GlobalArrays.HEADER), blocks[runtime.rank()].elements(), asLong, asDouble);
        runtime.sync();
    }

    /**
     * Creates an array of the same type and distribution (GA's {@code GA_Duplicate}); collective. Its elements start at
     * zero.
     *
     * @param newName the new array's name
     * @return the new array
     * @throws NullPointerException     if the name is null
     * @throws IllegalArgumentException if the name is blank
     * @throws IllegalStateException    if this array was destroyed
     */
    public GlobalArray duplicate(String newName) {
        requireLive();
        return runtime.create(newName, type, distribution);
    }

    /**
     * Destroys the array (GA's {@code GA_Destroy}); collective: finishes this rank's operations on it, waits for
     * every rank, frees the window and the block. After a job failure it only frees locally.
     *
     * @throws IllegalStateException if the array was already destroyed, or is accessed and not released
     */
    public void destroy() {
        requireLive();
        if (accessed > 0) {
            throw new IllegalStateException("array '" + name + "' is accessed " + accessed
                    + " time(s): release() it before destroy()");
        }
        Mp mp = runtime.mp();
        try {
            runtime.finishAll(this);
            if (mp.failure() == null) {
                mp.windowDestroy(window);
                mp.free(memory);
            }
        } finally {
            destroyed = true;
            runtime.forget(this);
        }
    }

    @Override
    public String toString() {
        return "GlobalArray{'" + name + "' " + type + " " + Arrays.toString(distribution.dims()) + " over "
                + distribution.ranks() + " ranks" + (destroyed ? ", destroyed" : "") + "}";
    }

    // ---- for the runtime ----

    GlobalArrays runtime() {
        return runtime;
    }

    MemorySegment local() {
        return memory;
    }

    MpWindow window() {
        return window;
    }

    int[] lo() {
        return new int[ndim()];
    }

    int[] hi() {
        int[] h = distribution.dims();
        for (int k = 0; k < h.length; k++) {
            h[k]--;
        }
        return h;
    }

    private void requireLive() {
        runtime.requireOpen();
        if (destroyed) {
            throw new IllegalStateException("global array '" + name + "' was destroyed");
        }
    }

    /** The element offset of a subscript inside its owner's row-major block. */
    private long offsetInBlock(int owner, int[] subscript) {
        GaPatch b = blocks[owner];
        long off = 0;
        for (int k = 0; k < subscript.length; k++) {
            off = off * b.extent(k) + (subscript[k] - b.lo(k));
        }
        return off;
    }

    /** Checks a patch and its buffer and splits it into per-owner contiguous runs; changes nothing. */
    private RunList plan(int[] lo, int[] hi, MemorySegment buf, int[] ld, boolean writesBuffer) {
        requireLive();
        distribution.checkPatch(lo, hi);
        Objects.requireNonNull(buf, "buf must not be null");
        int n = ndim();
        long[] ustride = new long[n];
        ustride[n - 1] = 1;
        if (ld != null && ld.length != n - 1) {
            throw new IllegalArgumentException("ld has " + ld.length + " entries; a " + n + "-D patch needs " + (n - 1));
        }
        for (int k = n - 2; k >= 0; k--) {
            int extent = hi[k + 1] - lo[k + 1] + 1;
            int l = ld == null ? extent : ld[k];
            if (l < extent) {
                throw new IllegalArgumentException("ld[" + k + "] = " + l + " is below the patch's extent " + extent
                        + " in dimension " + (k + 1));
            }
            ustride[k] = ustride[k + 1] * l;
        }
        String what = "the patch " + GlobalArrays.patch(lo, hi) + (ld == null ? "" : " with ld " + Arrays.toString(ld));
        // ustride[0] may reach 2^62 with large leading dimensions: the buffer's extent is computed exactly.
        long need;
        try {
            long last = 0;
            for (int k = 0; k < n; k++) {
                last = Math.addExact(last, Math.multiplyExact((long) (hi[k] - lo[k]), ustride[k]));
            }
            need = Math.multiplyExact(last + 1, (long) type.bytes());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + " spans more than Long.MAX_VALUE bytes of the buffer: no buffer "
                    + "is that large");
        }
        checkBuffer(buf, need, writesBuffer, what);
        int es = type.bytes();
        RunList runs = new RunList();
        for (GaPatch p : distribution.owners(lo, hi)) {
            GaPatch b = blocks[p.rank()];
            long[] bstride = new long[n];
            bstride[n - 1] = 1;
            for (int k = n - 2; k >= 0; k--) {
                bstride[k] = bstride[k + 1] * b.extent(k + 1);
            }
            long row = (long) p.extent(n - 1) * es;
            int[] i = p.lo();
            for (;;) {
                long r = 0;
                long u = 0;
                for (int k = 0; k < n; k++) {
                    r += (i[k] - b.lo(k)) * bstride[k];
                    u += (i[k] - lo[k]) * ustride[k];
                }
                runs.add(p.rank(), r * es, u * es, row);
                int k = n - 2;
                while (k >= 0 && i[k] == p.hi(k)) {
                    i[k] = p.lo(k);
                    k--;
                }
                if (k < 0) {
                    break;
                }
                i[k]++;
            }
        }
        return runs;
    }

    private RunList planElements(MemorySegment values, int[][] subscripts, boolean writesBuffer) {
        requireLive();
        Objects.requireNonNull(values, "values must not be null");
        Objects.requireNonNull(subscripts, "subscripts must not be null");
        for (int i = 0; i < subscripts.length; i++) {
            distribution.checkSubscript(subscripts[i], "subscripts[" + i + "]");
        }
        int es = type.bytes();
        checkBuffer(values, (long) subscripts.length * es, writesBuffer, subscripts.length + " elements");
        RunList runs = new RunList();
        // Grouped by owner in rank order, as the runtime expects; within an owner, in the caller's order.
        Integer[] order = new Integer[subscripts.length];
        int[] owners = new int[subscripts.length];
        for (int i = 0; i < subscripts.length; i++) {
            order[i] = i;
            owners[i] = distribution.owner(subscripts[i]);
        }
        Arrays.sort(order, (x, y) -> Integer.compare(owners[x], owners[y]));
        for (int i : order) {
            runs.add(owners[i], offsetInBlock(owners[i], subscripts[i]) * es, (long) i * es, es);
        }
        return runs;
    }

    private static void checkBuffer(MemorySegment buf, long need, boolean writesBuffer, String what) {
        if (buf.byteSize() < need) {
            throw new IllegalArgumentException("the buffer holds " + buf.byteSize() + " bytes; " + what + " needs " + need);
        }
        if (writesBuffer && buf.isReadOnly()) {
            throw new IllegalArgumentException("the buffer is read-only; a get writes into it");
        }
    }

    /** The bounding box of element subscripts (the patch a scatter or gather is ordered by). */
    private int[][] box(int[][] subscripts) {
        int n = ndim();
        int[] lo = new int[n];
        int[] hi = new int[n];
        Arrays.fill(lo, Integer.MAX_VALUE);
        Arrays.fill(hi, -1);
        for (int[] s : subscripts) {
            for (int k = 0; k < n; k++) {
                lo[k] = Math.min(lo[k], s[k]);
                hi[k] = Math.max(hi[k], s[k]);
            }
        }
        if (subscripts.length == 0) {
            Arrays.fill(lo, 0);
        }
        return new int[][] {lo, hi};
    }
}
