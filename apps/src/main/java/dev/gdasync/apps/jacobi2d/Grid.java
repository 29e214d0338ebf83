package dev.gdasync.apps.jacobi2d;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;

/**
 * The problem and its split (NVIDIA's multi-GPU Jacobi): an {@code ny × nx} grid, periodic in y, whose first and
 * last columns are fixed at {@code sin(2π·iy/ny)}; the rows are split over the PEs as evenly as possible (the first
 * {@code ny mod n} PEs one more). Each PE holds its rows with a halo row above (row 0) and below (row chunk + 1).
 */
record Grid(int nx, int ny, int pes) {
    Grid {
        if (nx < 3 || ny < 1 || pes < 1 || ny < pes) {
            throw new IllegalArgumentException("a grid of " + ny + " x " + nx + " over " + pes + " PEs: nx must be >= 3"
                    + " and every PE needs a row (ny >= PEs)");
        }
    }

    /** @return how many rows PE {@code pe} computes */
    int chunk(int pe) {
        return ny / pes + (pe < ny % pes ? 1 : 0);
    }

    /** @return the global index of PE {@code pe}'s first row */
    int first(int pe) {
        return pe * (ny / pes) + Math.min(pe, ny % pes);
    }

    /** @return the most rows a PE holds, halos included: every PE's arrays have this many */
    int rowsHeld() {
        return chunk(0) + 2;
    }

    /** @return the fixed value of the boundary columns in global row {@code iy} (any integer; periodic) */
    double boundary(int iy) {
        return Math.sin(2 * Math.PI * Math.floorMod(iy, ny) / ny);
    }

    /**
     * Sets a PE's starting values into a buffer of {@link #rowsHeld()} rows: zero inside, the boundary columns on
     * every held row, halos included (so the first iteration needs no exchange).
     */
    void initialise(MemorySegment a, int pe) {
        a.fill((byte) 0);
        int first = first(pe);
        for (int r = 0; r < chunk(pe) + 2; r++) {
            double b = boundary(first - 1 + r);
            a.setAtIndex(JAVA_DOUBLE, (long) r * nx, b);
            a.setAtIndex(JAVA_DOUBLE, (long) r * nx + nx - 1, b);
        }
    }

    /**
     * One Jacobi sweep of rows 1..rows of {@code a} into {@code aNew} (their inner columns): the same arithmetic, in
     * the same order, on every PE and in the 1-PE reference, so that the results are equal bit for bit.
     */
    static void sweep(MemorySegment a, MemorySegment aNew, int nx, int rows) {
        for (int r = 1; r <= rows; r++) {
            long row = (long) r * nx;
            for (int ix = 1; ix < nx - 1; ix++) {
                double v = 0.25 * (a.getAtIndex(JAVA_DOUBLE, row + ix + 1) + a.getAtIndex(JAVA_DOUBLE, row + ix - 1)
                        + a.getAtIndex(JAVA_DOUBLE, row + nx + ix) + a.getAtIndex(JAVA_DOUBLE, row - nx + ix));
                aNew.setAtIndex(JAVA_DOUBLE, row + ix, v);
            }
        }
    }

    /**
     * The 1-PE grid after {@code iterations} sweeps, as one PE holding every row computes it.
     *
     * @return the {@code ny × nx} grid, row-major, without halos
     */
    double[] reference(int iterations) {
        Grid one = new Grid(nx, ny, 1);
        // Native memory, as the PEs' heaps: the sweep's code stays compiled for one kind of segment.
        try (Arena arena = Arena.ofConfined()) {
            return reference(one, arena.allocate((long) (ny + 2) * nx * 8, 64),
                    arena.allocate((long) (ny + 2) * nx * 8, 64), iterations);
        }
    }

    private double[] reference(Grid one, MemorySegment a, MemorySegment b, int iterations) {
        one.initialise(a, 0);
        one.initialise(b, 0);
        for (int it = 0; it < iterations; it++) {
            sweep(a, b, nx, ny);
            // Periodic in y: the halos are the last and the first row.
            MemorySegment.copy(b, (long) ny * nx * 8, b, 0, nx * 8L);
            MemorySegment.copy(b, (long) nx * 8, b, (long) (ny + 1) * nx * 8, nx * 8L);
            MemorySegment t = a;
            a = b;
            b = t;
        }
        double[] out = new double[ny * nx];
        MemorySegment.copy(a, JAVA_DOUBLE, (long) nx * 8, out, 0, ny * nx);
        return out;
    }

    /** @return the L2 norm of a grid (printed, as the original prints its residual norm) */
    static double norm(double[] grid) {
        double s = 0;
        for (double v : grid) {
            s += v * v;
        }
        return Math.sqrt(s);
    }
}
