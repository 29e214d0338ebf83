package dev.gdasync.libmp.ga;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * How a 1- to 3-dimensional index space is split over ranks: a grid of blocks, each dimension cut at its own block
 * starts; the block at grid position {@code (b0, b1, b2)} belongs to the rank with that row-major grid index, and ranks
 * past the grid's size hold nothing. Immutable.
 *
 * <p>Made by {@link #regular} (GA's {@code chunk} minimums; the grid is chosen to balance the largest block),
 * {@link #even}, {@link #irregular} (GA's per-dimension block maps) or {@link #splitPoints} (CoGA's 1-D cumulative
 * split points, where a rank may hold nothing).
 */
public final class Distribution {
    /** The most dimensions an array has. */
    public static final int MAX_DIMS = 3;

    private final int ranks;
    private final int[] dims;
    /** starts[k] has grid[k] + 1 entries: block b of dimension k is [starts[k][b], starts[k][b + 1]). */
    private final int[][] starts;
    private final int[] grid;
    private final int blocks;

    private Distribution(int ranks, int[] dims, int[][] starts) {
        this.ranks = ranks;
        this.dims = dims;
        this.starts = starts;
        this.grid = new int[dims.length];
        int b = 1;
        for (int k = 0; k < dims.length; k++) {
            grid[k] = starts[k].length - 1;
            b *= grid[k];
        }
        this.blocks = b;
    }

    /**
     * A regular distribution with no minimum block size: {@code regular(ranks, dims, null)}.
     *
     * @param ranks the ranks, {@code >= 1}
     * @param dims  the extent of each dimension (1 to 3 of them, each {@code >= 1})
     * @return the distribution
     * @throws IllegalArgumentException as {@link #regular} does
     */
    public static Distribution even(int ranks, int... dims) {
        return regular(ranks, dims, null);
    }

    /**
     * A regular distribution (GA's {@code NGA_Create} with {@code chunk}): each dimension is cut into a number of
     * nearly equal blocks (they differ by at most one index), no block shorter than {@code chunk[k]} in dimension
     * {@code k}, at most {@code ranks} blocks in all. Of the grids that qualify, the one with the smallest largest
     * block is taken, then the one with the smallest block perimeter, then the one with more blocks, then the first
     * in lexicographic order; ranks past the grid hold nothing.
     *
     * @param ranks the ranks, {@code >= 1}
     * @param dims  the extent of each dimension (1 to 3 of them, each {@code >= 1})
     * @param chunk the minimum block extent of each dimension ({@code 0} or {@code -1}: none), or null for none
     * @return the distribution
     * @throws NullPointerException     if dims is null
     * @throws IllegalArgumentException if ranks, a dimension or a chunk is out of range, chunk's length differs, or the
     *                                  dimensions make more than {@code Long.MAX_VALUE} elements
     */
    public static Distribution regular(int ranks, int[] dims, int[] chunk) {
        int[] d = checkDims(ranks, dims);
        int[] maxBlocks = new int[d.length];
        if (chunk != null && chunk.length != d.length) {
            throw new IllegalArgumentException("chunk has " + chunk.length + " entries for " + d.length + " dimensions");
        }
        for (int k = 0; k < d.length; k++) {
            int c = chunk == null ? 0 : chunk[k];
            if (c < -1) {
                throw new IllegalArgumentException("chunk[" + k + "] is " + c + ": a minimum block extent is >= 1, or 0 or -1 for none");
            }
            maxBlocks[k] = c <= 0 ? d[k] : Math.max(1, d[k] / c);
        }
        int[] best = new int[d.length];
        int[] g = new int[d.length];
        long[] bestScore = {Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE};
        searchGrid(d, maxBlocks, ranks, 0, g, best, bestScore);
        int[][] starts = new int[d.length][];
        for (int k = 0; k < d.length; k++) {
            starts[k] = new int[best[k] + 1];
            for (int b = 0; b <= best[k]; b++) {
                starts[k][b] = (int) ((long) b * (d[k] / best[k]) + Math.min(b, d[k] % best[k]));
            }
        }
        return new Distribution(ranks, d, starts);
    }

    /** Tries every grid g with g[k] <= maxBlocks[k] and a product <= budget; keeps the best by the documented order. */
    private static void searchGrid(int[] d, int[] maxBlocks, int budget, int k, int[] g, int[] best, long[] bestScore) {
        if (k == d.length) {
            long largest = 1;
            long perimeter = 0;
            long count = 1;
            for (int i = 0; i < d.length; i++) {
                long e = (d[i] + g[i] - 1) / g[i];
                largest *= e;
                perimeter += e;
                count *= g[i];
            }
            long[] score = {largest, perimeter, -count};
            if (Arrays.compare(score, bestScore) < 0) {
                System.arraycopy(score, 0, bestScore, 0, 3);
                System.arraycopy(g, 0, best, 0, d.length);
            }
            return;
        }
        for (int n = 1; n <= Math.min(budget, maxBlocks[k]); n++) {
            g[k] = n;
            searchGrid(d, maxBlocks, budget / n, k + 1, g, best, bestScore);
        }
    }

    /**
     * An irregular distribution (GA's {@code NGA_Create_irreg}): dimension {@code k} is cut before each index of
     * {@code blockStarts[k]}.
     *
     * @param ranks       the ranks, {@code >= 1}; at least the product of the block counts
     * @param dims        the extent of each dimension (1 to 3 of them, each {@code >= 1})
     * @param blockStarts per dimension, the first index of each block: starting at 0, strictly increasing, below the
     *                    extent
     * @return the distribution
     * @throws NullPointerException     if an argument or a map is null
     * @throws IllegalArgumentException if a map breaks those rules, there are more blocks than ranks, or the dimensions
     *                                  make more than {@code Long.MAX_VALUE} elements
     */
    public static Distribution irregular(int ranks, int[] dims, int[][] blockStarts) {
        int[] d = checkDims(ranks, dims);
        Objects.requireNonNull(blockStarts, "blockStarts must not be null");
        if (blockStarts.length != d.length) {
            throw new IllegalArgumentException("blockStarts has " + blockStarts.length + " maps for " + d.length + " dimensions");
        }
        int[][] starts = new int[d.length][];
        long count = 1;
        for (int k = 0; k < d.length; k++) {
            int[] m = Objects.requireNonNull(blockStarts[k], "blockStarts[" + k + "] must not be null");
            if (m.length == 0 || m[0] != 0) {
                throw new IllegalArgumentException("blockStarts[" + k + "] must start with 0, got " + Arrays.toString(m));
            }
            for (int b = 1; b < m.length; b++) {
                if (m[b] <= m[b - 1] || m[b] >= d[k]) {
                    throw new IllegalArgumentException("blockStarts[" + k + "][" + b + "] = " + m[b] + " must be above "
                            + m[b - 1] + " and below the extent " + d[k]);
                }
            }
            starts[k] = Arrays.copyOf(m, m.length + 1);
            starts[k][m.length] = d[k];
            count *= m.length;
        }
        if (count > ranks) {
            throw new IllegalArgumentException("the maps make " + count + " blocks for " + ranks + " ranks");
        }
        return new Distribution(ranks, d, starts);
    }

    /**
     * CoGA's 1-D distribution by cumulative split points ({@code coGA_Create}'s {@code dis[n]}): rank {@code r} holds
     * {@code [splits[r - 1], splits[r])} (rank 0 from 0), so the array has {@code splits[n - 1]} elements and a rank
     * whose split equals the previous one holds nothing.
     *
     * @param splits one cumulative end per rank: non-decreasing, at least 0, the last at least 1
     * @return the distribution, over {@code splits.length} ranks
     * @throws NullPointerException     if splits is null
     * @throws IllegalArgumentException if the splits are empty, decrease, are negative or end at 0
     */
    public static Distribution splitPoints(int... splits) {
        Objects.requireNonNull(splits, "splits must not be null");
        if (splits.length == 0) {
            throw new IllegalArgumentException("splits must have one entry per rank, got none");
        }
        int[] starts = new int[splits.length + 1];
        int previous = 0;
        for (int r = 0; r < splits.length; r++) {
            if (splits[r] < previous) {
                throw new IllegalArgumentException("splits[" + r + "] = " + splits[r] + " is below "
                        + (r == 0 ? "0" : "splits[" + (r - 1) + "] = " + previous) + ": split points are cumulative");
            }
            starts[r] = previous;
            previous = splits[r];
        }
        if (previous == 0) {
            throw new IllegalArgumentException("the last split point is 0: the array needs at least one element");
        }
        starts[splits.length] = previous;
        return new Distribution(splits.length, new int[] {previous}, new int[][] {starts});
    }

    private static int[] checkDims(int ranks, int[] dims) {
        Objects.requireNonNull(dims, "dims must not be null");
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be >= 1, got " + ranks);
        }
        if (dims.length < 1 || dims.length > MAX_DIMS) {
            throw new IllegalArgumentException("an array has 1 to " + MAX_DIMS + " dimensions, got " + dims.length);
        }
        long elements = 1;
        for (int k = 0; k < dims.length; k++) {
            if (dims[k] < 1) {
                throw new IllegalArgumentException("dims[" + k + "] is " + dims[k] + ": every extent is >= 1");
            }
            // Every size and offset of the array is computed in longs from here on: its element count must be one.
            if (elements > Long.MAX_VALUE / dims[k]) {
                throw new IllegalArgumentException("dims " + Arrays.toString(dims) + " make more than Long.MAX_VALUE ("
                        + Long.MAX_VALUE + ") elements: an array's element count is a long");
            }
            elements *= dims[k];
        }
        return dims.clone();
    }

    /** @return the ranks the distribution is for */
    public int ranks() {
        return ranks;
    }

    /** @return the number of dimensions */
    public int ndim() {
        return dims.length;
    }

    /** @return the extent of each dimension (a copy) */
    public int[] dims() {
        return dims.clone();
    }

    /** @return the blocks per dimension (a copy) */
    public int[] grid() {
        return grid.clone();
    }

    /** @return the number of elements (exact: a distribution whose count is not a long is refused when made) */
    public long elements() {
        long n = 1;
        for (int d : dims) {
            n *= d;
        }
        return n;
    }

    /**
     * @param rank a rank
     * @return the block the rank owns, inclusive bounds; empty for a rank past the grid or with an empty split
     * @throws IllegalArgumentException if the rank is out of range
     */
    public GaPatch block(int rank) {
        if (rank < 0 || rank >= ranks) {
            throw new IllegalArgumentException("rank " + rank + " is out of range: ranks are 0.." + (ranks - 1));
        }
        int[] lo = new int[dims.length];
        int[] hi = new int[dims.length];
        if (rank >= blocks) {
            Arrays.fill(hi, -1);
            return new GaPatch(rank, lo, hi);
        }
        int rest = rank;
        for (int k = dims.length - 1; k >= 0; k--) {
            int b = rest % grid[k];
            rest /= grid[k];
            lo[k] = starts[k][b];
            hi[k] = starts[k][b + 1] - 1;
        }
        return new GaPatch(rank, lo, hi);
    }

    /**
     * @param subscript one index per dimension
     * @return the rank that owns the element
     * @throws NullPointerException     if subscript is null
     * @throws IllegalArgumentException if it has the wrong length or lies outside the array
     */
    public int owner(int... subscript) {
        checkSubscript(subscript, "subscript");
        int rank = 0;
        for (int k = 0; k < dims.length; k++) {
            rank = rank * grid[k] + blockOf(k, subscript[k]);
        }
        return rank;
    }

    /**
     * The owners of a patch, each with its part, in rank order (GA's {@code NGA_Locate_region}); owners whose part
     * would be empty are left out.
     *
     * @param lo the patch's first indices
     * @param hi the patch's last indices, inclusive
     * @return the parts, in increasing rank order
     * @throws NullPointerException     if lo or hi is null
     * @throws IllegalArgumentException if the patch does not lie in the array or {@code hi < lo} somewhere
     */
    public List<GaPatch> owners(int[] lo, int[] hi) {
        checkPatch(lo, hi);
        int n = dims.length;
        int[] bLo = new int[n];
        int[] bHi = new int[n];
        for (int k = 0; k < n; k++) {
            bLo[k] = blockOf(k, lo[k]);
            bHi[k] = blockOf(k, hi[k]);
        }
        List<GaPatch> parts = new ArrayList<>();
        int[] b = bLo.clone();
        for (;;) {
            int rank = 0;
            int[] plo = new int[n];
            int[] phi = new int[n];
            boolean empty = false;
            for (int k = 0; k < n; k++) {
                rank = rank * grid[k] + b[k];
                plo[k] = Math.max(lo[k], starts[k][b[k]]);
                phi[k] = Math.min(hi[k], starts[k][b[k] + 1] - 1);
                empty |= phi[k] < plo[k];
            }
            if (!empty) {
                parts.add(new GaPatch(rank, plo, phi));
            }
            int k = n - 1;
            while (k >= 0 && b[k] == bHi[k]) {
                b[k] = bLo[k];
                k--;
            }
            if (k < 0) {
                return parts;
            }
            b[k]++;
        }
    }

    /** The block of dimension k holding index i: the last block starting at or before it (empty blocks start there too). */
    private int blockOf(int k, int i) {
        int[] s = starts[k];
        int low = 0;
        int high = grid[k] - 1;
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (s[mid] <= i) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    void checkSubscript(int[] subscript, String what) {
        Objects.requireNonNull(subscript, what + " must not be null");
        if (subscript.length != dims.length) {
            throw new IllegalArgumentException(what + " has " + subscript.length + " indices for " + dims.length + " dimensions");
        }
        for (int k = 0; k < dims.length; k++) {
            if (subscript[k] < 0 || subscript[k] >= dims[k]) {
                throw new IllegalArgumentException(what + " " + Arrays.toString(subscript) + " is outside the array "
                        + Arrays.toString(dims) + " in dimension " + k);
            }
        }
    }

    void checkPatch(int[] lo, int[] hi) {
        Objects.requireNonNull(lo, "lo must not be null");
        Objects.requireNonNull(hi, "hi must not be null");
        if (lo.length != dims.length || hi.length != dims.length) {
            throw new IllegalArgumentException("lo and hi need " + dims.length + " indices, got " + lo.length + " and " + hi.length);
        }
        for (int k = 0; k < dims.length; k++) {
            if (lo[k] < 0 || hi[k] >= dims[k] || hi[k] < lo[k]) {
                throw new IllegalArgumentException("patch " + Arrays.toString(lo) + ".." + Arrays.toString(hi)
                        + " is out of bounds of the array " + Arrays.toString(dims) + " in dimension " + k
                        + " (needs 0 <= lo <= hi < extent)");
            }
        }
    }

    /**
     * A 64-bit digest of the block starts (FNV-1a over every dimension's starts), so that ranks can compare
     * distributions of any size through a fixed-size record: equal distributions have equal digests.
     */
    long startsDigest() {
        long h = 0xcbf29ce484222325L;
        for (int[] s : starts) {
            h = (h ^ s.length) * 0x100000001b3L;
            for (int v : s) {
                h = (h ^ v) * 0x100000001b3L;
            }
        }
        return h;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Distribution d && d.ranks == ranks && Arrays.equals(d.dims, dims) && Arrays.deepEquals(d.starts, starts);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * ranks + Arrays.hashCode(dims)) + Arrays.deepHashCode(starts);
    }

    @Override
    public String toString() {
        return "Distribution{" + Arrays.toString(dims) + " over " + ranks + " ranks, grid " + Arrays.toString(grid) + "}";
    }
}
