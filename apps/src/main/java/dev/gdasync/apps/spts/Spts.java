package dev.gdasync.apps.spts;

import dev.gdasync.apps.shmemrun.ShmemMain;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.shmem.ShmemDevice;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.libmp.shmem.Shmem;
import dev.gdasync.libmp.shmem.ShmemCmp;
import dev.gdasync.libmp.shmem.ShmemKi;
import dev.gdasync.libmp.shmem.ShmemSignalOp;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;

/**
 * {@code scripts/mprun -np N spts}: a synchronization-free sparse triangular solve L·x = b (the SpTS of seed 000's
 * evaluation) over the shmem API. The rows are split over the PEs in blocks; every PE holds the matrix. A PE solves
 * its rows in order: for each off-diagonal entry whose column another PE owns it waits for that value's ready flag in
 * its own heap, then solves the row and puts the value, with a SET signal on its ready flag, to every PE that has a
 * row needing it. No barrier or collective runs during the solve. Rank 0 then gathers x and checks the residual
 * against {@code --tolerance} (and prints the largest difference from the serial solve). {@code --mode host} runs
 * this on the CPU; {@code --mode ki} runs the same loop as a block of the host KI executor with shmem.cuh's device API
 * (the waits and the puts with signal on slots the CPU pre-filled), the CPU only preparing a launch per run of rows
 * whose sends fit the slots and completing it; {@code --mode sa} queues the solve on a host stream (a wait for each
 * remote value, the rows as stream tasks, each value's put with signal rung by the stream) and only synchronizes it;
 * the modes run one after the other on the same matrix.
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

    @Option(names = "--mode", split = ",", paramLabel = "MODE", defaultValue = "host,sa,ki",
            description = "host (the CPU solves and signals), sa (a host stream waits, solves in tasks and rings) and/or "
                    + "ki (a KI block solves, waits and signals) (default: ${DEFAULT-VALUE})")
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
        boolean ok = true;
        for (String mode : modes) {
            ok &= run(shmem, l, mode);
        }
        return ok;
    }

    @Override
    public String check() {
        for (String m : modes) {
            if (!m.equals("host") && !m.equals("sa") && !m.equals("ki")) {
                return "--mode takes host, sa and ki, got '" + m + "'";
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

    /** Slots a KI launch prepares toward each PE: a put with signal takes two, so 128 values per PE and launch. */
    static final int KI_SLOTS = 256;

    boolean run(Shmem shmem, LowerCsr matrix, String mode) {
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
        long[] counts = new long[3]; // values waited for, values sent, KI launches
        shmem.barrierAll();
        long t0 = System.nanoTime();
        if (mode.equals("ki")) {
            solveKi(shmem, l, consumers, x, ready, lo, hi, counts);
        } else if (mode.equals("sa")) {
            solveSa(shmem, l, consumers, x, ready, lo, hi, counts);
        } else {
            MemorySegment one = MemorySegment.ofArray(new double[1]);
            for (int i = lo; i < hi; i++) {
                double xi = solveRow(l, x, i, lo, j -> shmem.waitUntil(ready.asSlice(8L * j, 8), ShmemCmp.EQ, 1), counts);
                one.set(JAVA_DOUBLE, 0, xi);
                for (long m = consumers[i]; m != 0; m &= m - 1) {
                    int p = Long.numberOfTrailingZeros(m);
                    shmem.putSignalNbi(x.asSlice(8L * i, 8), one, ready.asSlice(8L * i, 8), 1, ShmemSignalOp.SET, p);
                    counts[1]++;
                }
            }
        }
        long waited = counts[0];
        long sent = counts[1];
        shmem.quiet();
        double seconds = (System.nanoTime() - t0) / 1e9;
        shmem.barrierAll();
        // Gather x on PE 0 for the check (after the timed solve).
        if (me != 0 && hi > lo) {
            shmem.put(x.asSlice(8L * lo, 8L * (hi - lo)), x.asSlice(8L * lo, 8L * (hi - lo)), 0);
        }
        shmem.barrierAll();
        System.out.printf(Locale.ROOT, "spts: PE %d mode %s solved rows %d..%d, waited for %d remote values, sent %d%s%n",
                me, mode, lo, hi - 1, waited, sent, mode.equals("ki") ? " in " + counts[2] + " KI launches" : "");
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
            System.out.printf(Locale.ROOT, "spts: n=%d, off-diagonal %d, PEs=%d, mode %s: %.4f s%n", rows,
                    l.offDiagonal(), pes, mode, seconds);
            System.out.printf(Locale.ROOT, "spts: mode %s: relative residual %.3e (tolerance %.1e): %s; max |x - serial x| "
                    + "%.3e%n", mode, residual, tolerance, ok ? "passed" : "FAILED", diff);
        }
        shmem.barrierAll();
        shmem.free(ready);
        shmem.free(x);
        return ok;
    }

    /** Sends between two quiets on the stream: reaps the stream's rung requests before the Mp's pool runs short. */
    static final int SA_QUIET_EVERY = 64;

    /**
     * The SA model: the CPU only queues on a host stream, in row order: a wait for each remote value the first time a
     * row needs it (later rows come after it in stream order), the rows between two sends as one stream task, and each
     * value's put with signal to its consumers, rung by the stream; then it synchronizes the stream.
     */
    private static void solveSa(Shmem shmem, LowerCsr l, long[] consumers, MemorySegment x, MemorySegment ready, int lo,
                                int hi, long[] counts) {
        try (HostStream stream = HostStream.create("spts-sa-" + shmem.myPe())) {
            boolean[] awaited = new boolean[lo];
            int from = lo; // rows [from, i) are queued for the next task
            int sends = 0;
            for (int i = lo; i < hi; i++) {
                boolean first = true;
                for (int e = l.rowStart[i]; e < l.rowStart[i + 1]; e++) {
                    int j = l.col[e];
                    counts[0] += j < lo ? 1 : 0;
                    if (j < lo && !awaited[j]) {
                        if (first) {
                            from = flushRows(stream, l, x, from, i, lo);
                            first = false;
                        }
                        awaited[j] = true;
                        shmem.signalWaitUntilOnStream(ready.asSlice(8L * j, 8), ShmemCmp.EQ, 1, stream);
                    }
                }
                if (consumers[i] != 0) {
                    from = flushRows(stream, l, x, from, i + 1, lo);
                    for (long m = consumers[i]; m != 0; m &= m - 1) {
                        shmem.putSignalOnStream(x.asSlice(8L * i, 8), x.asSlice(8L * i, 8), ready.asSlice(8L * i, 8), 1,
                                ShmemSignalOp.SET, Long.numberOfTrailingZeros(m), stream);
                        counts[1]++;
                        if (++sends % SA_QUIET_EVERY == 0) {
                            shmem.quietOnStream(stream);
                        }
                    }
                }
            }
            flushRows(stream, l, x, from, hi, lo);
            shmem.quietOnStream(stream);
            stream.synchronize();
        }
    }

    /** Queues rows [from, to) as one stream task; returns to. */
    private static int flushRows(HostStream stream, LowerCsr l, MemorySegment x, int from, int to, int lo) {
        if (to > from) {
            long[] none = new long[1];
            stream.launch(() -> {
                for (int r = from; r < to; r++) {
                    solveRow(l, x, r, lo, j -> { }, none); // the stream waited for every remote value already
                }
            });
        }
        return to;
    }

    /** Waits for a remote value (column j, owned by another PE). */
    private interface RemoteWait {
        void await(int j);
    }

    /** Solves row i: waits for each value another PE owns, then x_i = (b_i - sum) / diag_i, stored in x. */
    private static double solveRow(LowerCsr l, MemorySegment x, int i, int lo, RemoteWait remote, long[] counts) {
        double s = 0;
        for (int e = l.rowStart[i]; e < l.rowStart[i + 1]; e++) {
            int j = l.col[e];
            if (j < lo) {
                remote.await(j);
                counts[0]++;
            }
            s += l.val[e] * x.getAtIndex(JAVA_DOUBLE, j);
        }
        double xi = (b(i) - s) / l.diag[i];
        x.setAtIndex(JAVA_DOUBLE, i, xi);
        return xi;
    }

    /**
     * The KI model: a block of the host KI executor runs the row loop with the device API (signalWaitUntil on the
     * ready words, putSignalNbi of x_i from the heap itself). A launch may ring {@link #KI_SLOTS} slots toward a PE, so
     * the rows are cut into runs whose sends fit; each run is one launch, prepared and completed by this PE alone
     * (launches are not collective: a PE waits only for values, and the lowest unsolved row never waits for an
     * unsolved one).
     */
    private static void solveKi(Shmem shmem, LowerCsr l, long[] consumers, MemorySegment x, MemorySegment ready, int lo,
                                int hi, long[] counts) {
        List<int[]> runs = new ArrayList<>();
        int[] perPe = new int[64];
        int start = lo;
        for (int i = lo; i < hi; i++) {
            boolean fits = true;
            for (long m = consumers[i]; m != 0; m &= m - 1) {
                fits &= 2 * (perPe[Long.numberOfTrailingZeros(m)] + 1) <= KI_SLOTS;
            }
            if (!fits) {
                runs.add(new int[] {start, i});
                java.util.Arrays.fill(perPe, 0);
                start = i;
            }
            for (long m = consumers[i]; m != 0; m &= m - 1) {
                perPe[Long.numberOfTrailingZeros(m)]++;
            }
        }
        runs.add(new int[] {start, hi});
        counts[2] = runs.size();
        try (HostKiExecutor executor = HostKiExecutor.create("spts-ki-" + shmem.myPe(),
                HostKiExecutor.Options.defaults().withAfterRing(shmem.mp()::progressStoreRings))) {
            for (int[] run : runs) {
                ShmemKi launch = shmem.kiPrepare(executor, 1, KI_SLOTS);
                try {
                    executor.shmem(launch.table(), launch.state(), 1, ctx -> {
                        for (int i = run[0]; i < run[1]; i++) {
                            solveRow(l, x, i, lo, j -> ctx.signalWaitUntil(ready.asSlice(8L * j, 8), ShmemDevice.CMP_EQ, 1),
                                    counts);
                            for (long m = consumers[i]; m != 0; m &= m - 1) {
                                ctx.putSignalNbi(x.asSlice(8L * i, 8), x.asSlice(8L * i, 8), ready.asSlice(8L * i, 8), 1,
                                        false, Long.numberOfTrailingZeros(m));
                                counts[1]++;
                            }
                        }
                    }).join();
                } finally {
                    launch.complete();
                }
            }
        }
    }
}
