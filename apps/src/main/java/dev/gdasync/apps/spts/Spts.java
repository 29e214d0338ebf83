package dev.gdasync.apps.spts;

import dev.gdasync.apps.shmemrun.ShmemMain;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.libmp.shmem.Shmem;
import dev.gdasync.libmp.shmem.ShmemCmp;
import dev.gdasync.libmp.shmem.ShmemSignalOp;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;

/**
 * {@code scripts/mprun -np N spts}: a synchronization-free sparse triangular solve L·x = b (the SpTS of seed 000's
 * evaluation) over the shmem API. The rows are split over the PEs in blocks; every PE holds the matrix. A PE solves
 * its rows in order: for each off-diagonal entry whose column another PE owns it waits for that value's ready flag in
 * its own heap, then solves the row and puts the value, with a SET signal on its ready flag, to every PE that has a
 * row needing it. No barrier or collective runs during the solve. Rank 0 then gathers x and checks the residual
 * against {@code --tolerance} (and prints the largest difference from the serial solve).
 */
@Command(name = "scripts/mprun -np N spts", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false,
        description = "Synchronization-free sparse triangular solve over the shmem API: rows split over the PEs, each"
                + " solved value put with a signal to the PEs that need it, checked by its residual.")
public final class Spts implements ShmemMain.App {
    @Option(names = "--matrix", paramLabel = "FILE",
            description = "a Matrix Market coordinate file whose lower triangle is solved, instead of a generated matrix")
    Path matrix;

    @Option(names = "--n", paramLabel = "N", defaultValue = "4000", description = "generated: rows (default: ${DEFAULT-VALUE})")
    int n;

    @Option(names = "--per-row", paramLabel = "K", defaultValue = "6",
            description = "generated: off-diagonal entries per row (default: ${DEFAULT-VALUE})")
    int perRow;

    @Option(names = "--window", paramLabel = "W", defaultValue = "300",
            description = "generated: the entries' columns lie among the W rows above (default: ${DEFAULT-VALUE})")
    int window;

    @Option(names = "--seed", defaultValue = "1", description = "generated: the seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--mode", split = ",", paramLabel = "MODE", defaultValue = "host",
            description = "host (the CPU solves and signals; the stream and kernel models are not built yet)"
                    + " (default: ${DEFAULT-VALUE})")
    List<String> modes;

    @Option(names = "--tolerance", paramLabel = "T", defaultValue = "1e-12",
            description = "the largest relative residual that passes (default: ${DEFAULT-VALUE})")
    double tolerance;

    /** The matrix, once {@link #heapBytes} made it. */
    private LowerCsr l;

    private Spts() {
    }

    /**
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        ShmemMain.main("spts", new Spts(), args);
    }

    /** Reads or generates the matrix (every PE holds all of it) and sizes the heap for x and the ready words. */
    @Override
    public long heapBytes(Mp mp) throws IOException {
        l = matrix != null ? LowerCsr.readMatrixMarket(matrix) : LowerCsr.random(n, perRow, window, seed);
        return 16L * l.n + (1 << 16);
    }

    @Override
    public boolean run(Shmem shmem) {
        return run(shmem, l);
    }

    @Override
    public String check() {
        for (String m : modes) {
            if (!m.equals("host")) {
                return "--mode takes host (sa and ki are not built for spts yet), got '" + m + "'";
            }
        }
        if (matrix == null && (n < 1 || perRow < 0 || window < Math.max(1, perRow))) {
            return "--n must be >= 1, --per-row >= 0 and --window >= max(1, --per-row)";
        }
        return null;
    }

    /** @return the first row of PE {@code pe} among {@code pes} for {@code n} rows (blocks, the first n mod pes one larger) */
    static int first(int n, int pes, int pe) {
        return pe * (n / pes) + Math.min(pe, n % pes);
    }

    /** @return the PE owning row {@code i} */
    static int owner(int n, int pes, int i) {
        int lo = 0;
        int hi = pes - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (first(n, pes, mid) <= i) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** The right-hand side: b_i = 1 + (i mod 7). */
    static double b(int i) {
        return 1 + i % 7;
    }

    boolean run(Shmem shmem, LowerCsr matrix) {
        LowerCsr l = matrix;
        int me = shmem.myPe();
        int pes = shmem.nPes();
        if (pes > 64) {
            throw new IllegalArgumentException("spts keeps each value's consumers in a 64-bit mask: at most 64 PEs");
        }
        int rows = l.n;
        // consumers[j]: the PEs other than j's owner that have a row with an entry in column j.
        long[] consumers = new long[rows];
        for (int i = 0; i < rows; i++) {
            int oi = owner(rows, pes, i);
            for (int e = l.rowStart[i]; e < l.rowStart[i + 1]; e++) {
                int j = l.col[e];
                if (owner(rows, pes, j) != oi) {
                    consumers[j] |= 1L << oi;
                }
            }
        }
        MemorySegment x = shmem.calloc(rows, 8);
        MemorySegment ready = shmem.calloc(rows, 8);
        int lo = first(rows, pes, me);
        int hi = first(rows, pes, me + 1);
        long sent = 0;
        long waited = 0;
        shmem.barrierAll();
        long t0 = System.nanoTime();
        MemorySegment one = MemorySegment.ofArray(new double[1]);
        for (int i = lo; i < hi; i++) {
            double s = 0;
            for (int e = l.rowStart[i]; e < l.rowStart[i + 1]; e++) {
                int j = l.col[e];
                if (j < lo) {
                    shmem.waitUntil(ready.asSlice(8L * j, 8), ShmemCmp.EQ, 1);
                    waited++;
                }
                s += l.val[e] * x.getAtIndex(JAVA_DOUBLE, j);
            }
            double xi = (b(i) - s) / l.diag[i];
            x.setAtIndex(JAVA_DOUBLE, i, xi);
            one.set(JAVA_DOUBLE, 0, xi);
            for (long m = consumers[i]; m != 0; m &= m - 1) {
                int p = Long.numberOfTrailingZeros(m);
                shmem.putSignalNbi(x.asSlice(8L * i, 8), one, ready.asSlice(8L * i, 8), 1, ShmemSignalOp.SET, p);
                sent++;
            }
        }
        shmem.quiet();
        double seconds = (System.nanoTime() - t0) / 1e9;
        shmem.barrierAll();
        // Gather x on PE 0 for the check (after the timed solve).
        if (me != 0 && hi > lo) {
            shmem.put(x.asSlice(8L * lo, 8L * (hi - lo)), x.asSlice(8L * lo, 8L * (hi - lo)), 0);
        }
        shmem.barrierAll();
        System.out.printf(Locale.ROOT, "spts: PE %d solved rows %d..%d, waited for %d remote values, sent %d%n", me, lo,
                hi - 1, waited, sent);
        boolean ok = true;
        if (me == 0) {
            double[] all = x.toArray(JAVA_DOUBLE);
            double[] bv = new double[rows];
            for (int i = 0; i < rows; i++) {
                bv[i] = b(i);
            }
            double residual = l.relativeResidual(all, bv);
            double[] serial = l.solveSerial(bv);
            double diff = 0;
            for (int i = 0; i < rows; i++) {
                diff = Math.max(diff, Math.abs(serial[i] - all[i]));
            }
            ok = residual <= tolerance;
            System.out.printf(Locale.ROOT, "spts: n=%d, off-diagonal %d, PEs=%d, mode host: %.4f s%n", rows,
                    l.offDiagonal(), pes, seconds);
            System.out.printf(Locale.ROOT, "spts: relative residual %.3e (tolerance %.1e): %s; max |x - serial x| %.3e%n",
                    residual, tolerance, ok ? "passed" : "FAILED", diff);
        }
        shmem.barrierAll();
        return ok;
    }
}
