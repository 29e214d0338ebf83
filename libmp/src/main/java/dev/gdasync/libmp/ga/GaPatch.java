package dev.gdasync.libmp.ga;

import java.util.Arrays;

/**
 * A rectangular index range owned by one rank, with inclusive bounds: a rank's block of a {@link Distribution}, or
 * one owner's part of a patch ({@link Distribution#owners}). An empty one (a rank that holds nothing) has
 * {@code hi[k] = lo[k] - 1} in some dimension and says so through {@link #isEmpty()}.
 */
public final class GaPatch {
    private final int rank;
    private final int[] lo;
    private final int[] hi;

    GaPatch(int rank, int[] lo, int[] hi) {
        this.rank = rank;
        this.lo = lo;
        this.hi = hi;
    }

    /** @return the rank that owns the patch */
    public int rank() {
        return rank;
    }

    /** @return the first index of each dimension (a copy) */
    public int[] lo() {
        return lo.clone();
    }

    /** @return the last index of each dimension, inclusive (a copy) */
    public int[] hi() {
        return hi.clone();
    }

    /**
     * @param dim the dimension
     * @return the first index in that dimension
     */
    public int lo(int dim) {
        return lo[dim];
    }

    /**
     * @param dim the dimension
     * @return the last index in that dimension, inclusive
     */
    public int hi(int dim) {
        return hi[dim];
    }

    /** @return the number of dimensions */
    public int ndim() {
        return lo.length;
    }

    /**
     * @param dim the dimension
     * @return how many indices the patch spans in that dimension (0 if empty)
     */
    public int extent(int dim) {
        return Math.max(0, hi[dim] - lo[dim] + 1);
    }

    /** @return whether the patch holds no element */
    public boolean isEmpty() {
        for (int k = 0; k < lo.length; k++) {
            if (hi[k] < lo[k]) {
                return true;
            }
        }
        return false;
    }

    /** @return how many elements the patch holds */
    public long elements() {
        long n = 1;
        for (int k = 0; k < lo.length; k++) {
            n *= extent(k);
        }
        return n;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GaPatch p && p.rank == rank && Arrays.equals(p.lo, lo) && Arrays.equals(p.hi, hi);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * rank + Arrays.hashCode(lo)) + Arrays.hashCode(hi);
    }

    @Override
    public String toString() {
        return "rank " + rank + " " + (isEmpty() ? "empty" : Arrays.toString(lo) + ".." + Arrays.toString(hi));
    }
}
