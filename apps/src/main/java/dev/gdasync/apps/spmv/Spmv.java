package dev.gdasync.apps.spmv;

import dev.gdasync.apps.common.RankMain;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.libmp.ga.Distribution;
import dev.gdasync.libmp.ga.GaPatch;
import dev.gdasync.libmp.ga.GaType;
import dev.gdasync.libmp.ga.GlobalArray;
import dev.gdasync.libmp.ga.GlobalArrays;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;

/**
 * {@code scripts/mprun -np N spmv}: iterations of {@code y = A·x / ‖A‖∞; x = y} with the CSR rows of A split over the
 * ranks as the vectors' blocks, x gathered by {@code get} of the column span each rank's rows touch, y written by
 * {@code put} (or {@code acc} into a zeroed y); the result is checked against the serial product on rank 0.
 */
@Command(name = "scripts/mprun -np N spmv", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false,
        description = "Sparse matrix-vector product over global arrays: CSR rows split over the ranks, x and y global"
                + " arrays, checked against the serial product.")
public final class Spmv implements RankMain.App {
    @Option(names = "--matrix", paramLabel = "FILE", description = "a Matrix Market coordinate file (square; real,"
            + " integer or pattern; general or symmetric) instead of a generated matrix")
    Path matrix;

    @Option(names = "--generate", paramLabel = "KIND", defaultValue = "laplace2d",
            description = "the generated matrix: laplace2d (5-point Laplacian of a g x g grid, n = g*g) or random"
                    + " (default: ${DEFAULT-VALUE})")
    String generate;

    @Option(names = "--size", paramLabel = "N", defaultValue = "64",
            description = "laplace2d: the grid side g; random: the rows n (default: ${DEFAULT-VALUE})")
    int size;

    @Option(names = "--per-row", paramLabel = "K", defaultValue = "8",
            description = "random: entries drawn per row besides the diagonal (default: ${DEFAULT-VALUE})")
    int perRow;

    @Option(names = "--seed", defaultValue = "1", description = "random: the seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--iterations", paramLabel = "K", defaultValue = "10", description = "products (default: ${DEFAULT-VALUE})")
    int iterations;

    @Option(names = "--write", paramLabel = "HOW", defaultValue = "put",
            description = "how each rank writes its part of y: put, or acc into a zeroed y (default: ${DEFAULT-VALUE})")
    String write;

    private Spmv() {
    }

    /**
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        RankMain.main("spmv", "rank", new Spmv(), args);
    }

    @Override
    public boolean run(EnvBootstrap boot, Mp mp) throws Exception {
        try (GlobalArrays ga = new GlobalArrays(mp)) {
            boolean ok = run(ga);
            ga.sync();
            return ok;
        }
    }

    @Override
    public String optionsProblem() {
        if (!write.equals("put") && !write.equals("acc")) {
            return "--write must be put or acc, got '" + write + "'";
        }
        if (matrix == null && !generate.equals("laplace2d") && !generate.equals("random")) {
            return "--generate must be laplace2d or random, got '" + generate + "'";
        }
        if (size < 1 || iterations < 1 || perRow < 0) {
            return "--size and --iterations must be >= 1 and --per-row >= 0";
        }
        return null;
    }

    /** The rows first..first+rows-1 of the chosen matrix (every row when rows is -1). */
    CsrMatrix rows(int n, int first, int rows) throws Exception {
        if (matrix != null) {
            return CsrMatrix.readMatrixMarket(matrix, first, rows);
        }
        return generate.equals("laplace2d") ? CsrMatrix.laplace2d(size, first, rows) : CsrMatrix.random(n, perRow, seed, first, rows);
    }

    int order() throws Exception {
        if (matrix != null) {
            return CsrMatrix.readMatrixMarket(matrix, 0, 0).n;
        }
        return generate.equals("laplace2d") ? size * size : size;
    }

    /** Runs the iterations; rank 0 checks against the serial product. @return whether the check passed */
    boolean run(GlobalArrays ga) throws Exception {
        int n = order();
        int me = ga.rank();
        Distribution rowsOf = Distribution.even(ga.size(), n);
        GlobalArray x = ga.create("x", GaType.DOUBLE, rowsOf);
        GlobalArray y = x.duplicate("y");
        GlobalArray norms = ga.create("row-sums", GaType.DOUBLE, Distribution.even(ga.size(), ga.size()));
        GaPatch mine = x.distribution(me);
        int first = mine.isEmpty() ? 0 : mine.lo(0);
        int count = (int) mine.elements();
        CsrMatrix a = rows(n, first, count);
        // ‖A‖∞ from every rank's slice: each puts its own, all read all.
        norms.put(new int[] {me}, new int[] {me}, MemorySegment.ofArray(new double[] {a.maxRowSum()}), null);
        ga.sync();
        double[] sums = new double[ga.size()];
        norms.get(new int[] {0}, new int[] {ga.size() - 1}, MemorySegment.ofArray(sums), null);
        double scale = 0;
        for (double s : sums) {
            scale = Math.max(scale, s);
        }
        scale = scale == 0 ? 1 : 1 / scale;
        if (count > 0) {
            double[] x0 = new double[count];
            for (int i = 0; i < count; i++) {
                x0[i] = start(first + i);
            }
            x.put(new int[] {first}, new int[] {first + count - 1}, MemorySegment.ofArray(x0), null);
        }
        ga.sync();
        int[] span = a.columnSpan();
        double[] xs = new double[Math.max(0, span[1] - span[0] + 1)];
        double[] ys = new double[count];
        long t0 = System.nanoTime();
        for (int it = 0; it < iterations; it++) {
            if (write.equals("acc")) {
                y.zero();
            }
            if (xs.length > 0) {
                x.get(new int[] {span[0]}, new int[] {span[1]}, MemorySegment.ofArray(xs), null);
            }
            a.multiply(xs, span[0], ys);
            for (int i = 0; i < count; i++) {
                ys[i] *= scale;
            }
            if (count > 0) {
                int[] lo = {first};
                int[] hi = {first + count - 1};
                if (write.equals("acc")) {
                    y.acc(lo, hi, MemorySegment.ofArray(ys), null, 1.0);
                } else {
                    y.put(lo, hi, MemorySegment.ofArray(ys), null);
                }
            }
            ga.sync();
            // x = y: each rank copies its own block.
            if (count > 0) {
                y.get(new int[] {first}, new int[] {first + count - 1}, MemorySegment.ofArray(ys), null);
                x.put(new int[] {first}, new int[] {first + count - 1}, MemorySegment.ofArray(ys), null);
            }
            ga.sync();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        boolean ok = true;
        if (me == 0) {
            CsrMatrix full = rows(n, 0, n);
            double[] serial = new double[n];
            for (int i = 0; i < n; i++) {
                serial[i] = start(i);
            }
            double[] next = new double[n];
            for (int it = 0; it < iterations; it++) {
                full.multiply(serial, 0, next);
                for (int i = 0; i < n; i++) {
                    serial[i] = next[i] * scale;
                }
            }
            MemorySegment got = MemorySegment.ofArray(new double[n]);
            x.get(new int[] {0}, new int[] {n - 1}, got, null);
            double worst = 0;
            double largest = 0;
            for (int i = 0; i < n; i++) {
                worst = Math.max(worst, Math.abs(got.getAtIndex(JAVA_DOUBLE, i) - serial[i]));
                largest = Math.max(largest, Math.abs(serial[i]));
            }
            // The same operations in the same order on each row: the products agree exactly.
            ok = worst == 0;
            System.out.printf(Locale.ROOT, "spmv: %s n=%d nnz=%d ranks=%d iterations=%d write=%s: %.3f ms per iteration,"
                            + " max |x - serial| = %.3g (max |x| = %.3g): %s%n",
                    matrix != null ? matrix.getFileName() : generate, n, full.nonzeros(), ga.size(), iterations, write,
                    seconds * 1e3 / iterations, worst, largest, ok ? "matches the serial product" : "DIFFERS from the serial product");
        }
        ga.sync();
        norms.destroy();
        y.destroy();
        x.destroy();
        return ok;
    }

    private static double start(int i) {
        return 1 + (i % 7) / 8.0;
    }
}
