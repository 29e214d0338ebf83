package dev.gdasync.apps.jacobi2d;

import dev.gdasync.apps.common.CsvFile;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code scripts/mprun -np N jacobi2d [--mode host,sa,ki]}: NVIDIA's multi-GPU Jacobi (multi-gpu-programming-models) on
 * the shmem API. The rows of a grid periodic in y are split over the PEs; after each sweep a PE puts its first and
 * last row into its neighbours' halos with a put-with-signal (SET to the sweep number), and the next sweep waits for
 * both signals. {@code host}: the CPU sweeps, puts and waits. {@code sa}: the CPU only queues; a host stream runs the
 * sweeps and rings the puts, signals and waits. {@code ki}: a block of the host KI executor sweeps, puts and waits
 * through the shmem device API over templated sends. Each mode's grid is compared with the 1-PE grid element by element.
 */
@Command(name = "scripts/mprun -np N jacobi2d", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false,
        description = "Jacobi relaxation of a 2D grid over the shmem API: rows split over the PEs, halo rows by"
                + " put-with-signal, the result compared with the 1-PE grid element by element.")
public final class Jacobi2d implements ShmemMain.App {
    @Option(names = "--nx", paramLabel = "N", defaultValue = "512", description = "columns (default: ${DEFAULT-VALUE})")
    int nx;

    @Option(names = "--ny", paramLabel = "N", defaultValue = "512", description = "rows (default: ${DEFAULT-VALUE})")
    int ny;

    @Option(names = "--iterations", paramLabel = "K", defaultValue = "200",
            description = "sweeps (default: ${DEFAULT-VALUE})")
    int iterations;

    @Option(names = "--mode", split = ",", paramLabel = "MODE", defaultValue = "host,sa,ki",
            description = "the models to run side by side: host, sa and/or ki (default: ${DEFAULT-VALUE})")
    List<String> modes;

    @Option(names = "--repeat", paramLabel = "R", defaultValue = "3",
            description = "timed runs per mode, the modes interleaved; the best is reported (default: ${DEFAULT-VALUE})")
    int repeat;

    @Option(names = "--csv", paramLabel = "FILE",
            description = "append one row per mode: mode,pes,nx,ny,iterations,seconds,ms_per_iteration,equal")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE",
            description = "after appending to --csv, draw every row of that file into this PNG")
    Path plot;

    /** Sweeps per KI launch: 4 slots toward a neighbour per sweep fit the 256 a launch may prepare. */
    private static final int KI_ITERATIONS = 64;

    private Jacobi2d() {
    }

    /**
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        ShmemMain.main("jacobi2d", new Jacobi2d(), args);
    }

    @Override
    public long heapBytes(Mp mp) {
        Grid grid = new Grid(nx, ny, mp.size());
        return 2L * (2L * grid.rowsHeld() * nx * 8 + 4096) + (1 << 20);
    }

    @Override
    public boolean run(Shmem shmem) throws IOException {
        return run(shmem, new Grid(nx, ny, shmem.nPes()));
    }

    @Override
    public String check() {
        for (String m : modes) {
            if (!m.equals("host") && !m.equals("sa") && !m.equals("ki")) {
                return "--mode takes host, sa and ki, got '" + m + "'";
            }
        }
        if (nx < 3 || ny < 1 || iterations < 1 || repeat < 1) {
            return "--nx must be >= 3, --ny, --iterations and --repeat >= 1";
        }
        if (plot != null && csv == null) {
            return "--plot draws the rows of --csv: give --csv too";
        }
        return null;
    }

    /** What one timed run of a mode gave on this PE. */
    record Result(String mode, double seconds, double[] grid) {
    }

    /** Runs every mode {@code repeat} times, interleaved; PE 0 checks, prints and writes the CSV. @return success */
    boolean run(Shmem shmem, Grid grid) throws IOException {
        int me = shmem.myPe();
        int n = shmem.nPes();
        if (me == 0) {
            System.out.printf(Locale.ROOT, "Jacobi relaxation: %d iterations on %d x %d mesh, %d PEs, modes %s%n",
                    iterations, ny, nx, n, String.join(",", modes));
        }
        double[] best = new double[modes.size()];
        java.util.Arrays.fill(best, Double.MAX_VALUE);
        double[][] grids = new double[modes.size()][];
        for (int r = 0; r < repeat; r++) {
            for (int m = 0; m < modes.size(); m++) {
                Result res = switch (modes.get(m)) {
                    case "host" -> host(shmem, grid);
                    case "sa" -> sa(shmem, grid);
                    default -> ki(shmem, grid);
                };
                best[m] = Math.min(best[m], res.seconds);
                grids[m] = res.grid;
            }
        }
        boolean ok = true;
        if (me == 0) {
            // The serial grid is the check's reference only: its time is not the modes' 1-PE time (run -np 1 for that).
            double[] reference = grid.reference(iterations);
            System.out.printf(Locale.ROOT, "1 PE reference grid (serial): norm %.10e%n", Grid.norm(reference));
            List<String> rows = new ArrayList<>();
            for (int m = 0; m < modes.size(); m++) {
                long differ = 0;
                for (int k = 0; k < reference.length; k++) {
                    differ += Double.doubleToRawLongBits(grids[m][k]) == Double.doubleToRawLongBits(reference[k]) ? 0 : 1;
                }
                boolean equal = differ == 0;
                ok &= equal;
                System.out.printf(Locale.ROOT, "%dx%d: %d PEs (%s): %8.4f s, %.3f ms/iteration (best of %d)%n", ny, nx, n,
                        modes.get(m), best[m], best[m] * 1e3 / iterations, repeat);
                System.out.println(equal
                        ? "check (" + modes.get(m) + "): the " + n + "-PE grid equals the 1-PE grid element by element ("
                                + reference.length + " elements), norm " + String.format(Locale.ROOT, "%.10e", Grid.norm(grids[m]))
                        : "check (" + modes.get(m) + ") FAILED: " + differ + " of " + reference.length
                                + " elements differ from the 1-PE grid");
                rows.add(String.format(Locale.ROOT, "%s,%d,%d,%d,%d,%.6f,%.6f,%b", modes.get(m), n, nx, ny,
                        iterations, best[m], best[m] * 1e3 / iterations, equal));
            }
            for (String model : List.of("sa", "ki")) {
                if (modes.contains(model) && modes.contains("host")) {
                    System.out.printf(Locale.ROOT, "%s / host time: %.2f (measured side by side, best of %d)%n", model,
                            best[modes.indexOf(model)] / best[modes.indexOf("host")], repeat);
                }
            }
            if (csv != null) {
                appendCsv(rows);
                if (plot != null) {
                    JacobiPlot.write(JacobiPlot.read(csv), plot);
                    System.out.println("plot: " + plot);
                }
            }
        }
        shmem.barrierAll();
        return ok;
    }

    /**
     * One run's symmetric arrays (the two grids a and a_new, the two signal words) and this PE's place: its rows,
     * the PE above (whose bottom halo is this PE's first row) and the PE below (whose top halo is its last row).
     */
    private record Layout(MemorySegment[] bufs, MemorySegment signals, int above, int below, int rows, int aboveRows,
                          long rowBytes) {
        static Layout allocate(Shmem shmem, Grid grid) {
            long cells = (long) grid.rowsHeld() * grid.nx();
            MemorySegment a = shmem.calloc(cells, 8);
            MemorySegment b = shmem.calloc(cells, 8);
            int me = shmem.myPe();
            grid.initialise(a, me);
            grid.initialise(b, me);
            MemorySegment signals = shmem.calloc(2, 8);
            shmem.barrierAll();
            int n = shmem.nPes();
            int above = (me + n - 1) % n;
            return new Layout(new MemorySegment[] {a, b}, signals, above, (me + 1) % n, grid.chunk(me),
                    grid.chunk(above), grid.nx() * 8L);
        }

        void free(Shmem shmem) {
            shmem.free(signals);
            shmem.free(bufs[1]);
            shmem.free(bufs[0]);
        }

        /** The signal the PE above sets when the top halo holds its row of a sweep. */
        MemorySegment fromAbove() {
            return signals.asSlice(0, 8);
        }

        /** The signal the PE below sets when the bottom halo holds its row of a sweep. */
        MemorySegment fromBelow() {
            return signals.asSlice(8, 8);
        }

        MemorySegment firstRow(MemorySegment buf) {
            return buf.asSlice(rowBytes, rowBytes);
        }

        MemorySegment lastRow(MemorySegment buf) {
            return buf.asSlice(rows * rowBytes, rowBytes);
        }

        MemorySegment topHalo(MemorySegment buf) {
            return buf.asSlice(0, rowBytes);
        }

        /** @return where, in the PE above's buffer (same offset as {@code buf}), its bottom halo is */
        MemorySegment bottomHaloAbove(MemorySegment buf) {
            return buf.asSlice((aboveRows + 1) * rowBytes, rowBytes);
        }
    }

    /** {@code host}: the CPU sweeps, puts its edge rows with signals, and waits for its neighbours' signals. */
    Result host(Shmem shmem, Grid grid) {
        Layout l = Layout.allocate(shmem, grid);
        long t0 = System.nanoTime();
        for (int it = 0; it < iterations; it++) {
            if (it > 0) {
                shmem.waitUntil(l.fromAbove(), ShmemCmp.GE, it);
                shmem.waitUntil(l.fromBelow(), ShmemCmp.GE, it);
            }
            MemorySegment next = l.bufs[(it + 1) % 2];
            Grid.sweep(l.bufs[it % 2], next, nx, l.rows);
            shmem.putSignalNbi(l.bottomHaloAbove(next), l.firstRow(next), l.fromBelow(), it + 1, ShmemSignalOp.SET,
                    l.above);
            shmem.putSignalNbi(l.topHalo(next), l.lastRow(next), l.fromAbove(), it + 1, ShmemSignalOp.SET, l.below);
        }
        return finish(shmem, grid, l, "host", t0);
    }

    /**
     * {@code sa}: the CPU queues every sweep on a host stream (a task), the puts with signal and the signal waits
     * (stream descriptors), then waits once for the stream; the stream quiets as it goes.
     */
    Result sa(Shmem shmem, Grid grid) {
        Layout l = Layout.allocate(shmem, grid);
        int width = nx;
        long t0 = System.nanoTime();
        try (HostStream stream = HostStream.create("jacobi2d-sa-" + shmem.myPe())) {
            for (int it = 0; it < iterations; it++) {
                if (it > 0) {
                    shmem.signalWaitUntilOnStream(l.fromAbove(), ShmemCmp.GE, it, stream);
                    shmem.signalWaitUntilOnStream(l.fromBelow(), ShmemCmp.GE, it, stream);
                }
                MemorySegment cur = l.bufs[it % 2];
                MemorySegment next = l.bufs[(it + 1) % 2];
                stream.launch(() -> Grid.sweep(cur, next, width, l.rows));
                shmem.putSignalOnStream(l.bottomHaloAbove(next), l.firstRow(next), l.fromBelow(), it + 1,
                        ShmemSignalOp.SET, l.above, stream);
                shmem.putSignalOnStream(l.topHalo(next), l.lastRow(next), l.fromAbove(), it + 1, ShmemSignalOp.SET,
                        l.below, stream);
            }
            shmem.quietOnStream(stream);
            stream.synchronize();
        }
        return finish(shmem, grid, l, "sa", t0);
    }

    /**
     * {@code ki}: one block of the host KI executor runs the sweeps and, through shmem.cuh's device API, the puts with
     * signal (templated writes the CPU pre-filled) and the signal waits; the CPU only prepares a launch per
     * {@link #KI_ITERATIONS} sweeps and completes it.
     */
    Result ki(Shmem shmem, Grid grid) {
        Layout l = Layout.allocate(shmem, grid);
        int width = nx;
        try (HostKiExecutor executor = HostKiExecutor.create("jacobi2d-ki-" + shmem.myPe(),
                HostKiExecutor.Options.defaults().withAfterRing(shmem.mp()::progressStoreRings))) {
            long t0 = System.nanoTime();
            for (int from = 0; from < iterations; from += KI_ITERATIONS) {
                int first = from;
                int last = Math.min(iterations, from + KI_ITERATIONS);
                // Two puts with signal per sweep, each two slots; with 2 PEs both go to the one neighbour.
                ShmemKi launch = shmem.kiPrepare(executor, 1, 4 * KI_ITERATIONS);
                try {
                    executor.shmem(launch.table(), launch.state(), 1, ctx -> {
                        for (int it = first; it < last; it++) {
                            if (it > 0) {
                                ctx.signalWaitUntil(l.fromAbove(), ShmemDevice.CMP_GE, it);
                                ctx.signalWaitUntil(l.fromBelow(), ShmemDevice.CMP_GE, it);
                            }
                            MemorySegment next = l.bufs[(it + 1) % 2];
                            Grid.sweep(l.bufs[it % 2], next, width, l.rows);
                            ctx.putSignalNbi(l.bottomHaloAbove(next), l.firstRow(next), l.fromBelow(), it + 1, false,
                                    l.above);
                            ctx.putSignalNbi(l.topHalo(next), l.lastRow(next), l.fromAbove(), it + 1, false, l.below);
                        }
                    }).join();
                } finally {
                    launch.complete();
                }
            }
            return finish(shmem, grid, l, "ki", t0);
        }
    }

    /** Ends a timed run at a barrier, gathers the grid on PE 0 and frees the run's arrays. */
    private Result finish(Shmem shmem, Grid grid, Layout l, String mode, long t0) {
        shmem.barrierAll();
        double seconds = (System.nanoTime() - t0) / 1e9;
        double[] all = gather(shmem, grid, l.bufs[iterations % 2]);
        l.free(shmem);
        return new Result(mode, seconds, all);
    }

    /** @return on PE 0, every PE's rows of its final buffer in global order; null elsewhere */
    private double[] gather(Shmem shmem, Grid grid, MemorySegment last) {
        double[] all = null;
        if (shmem.myPe() == 0) {
            all = new double[ny * nx];
            MemorySegment out = MemorySegment.ofArray(all);
            for (int p = 0; p < shmem.nPes(); p++) {
                long bytes = (long) grid.chunk(p) * nx * 8;
                shmem.get(out.asSlice((long) grid.first(p) * nx * 8, bytes), last.asSlice(nx * 8L, bytes), p);
            }
        }
        shmem.barrierAll();
        return all;
    }

    private void appendCsv(List<String> rows) throws IOException {
        if (csv.getParent() != null) {
            Files.createDirectories(csv.getParent());
        }
        CsvFile.append(csv, JacobiPlot.HEADER, rows);
        System.out.println("csv: " + csv);
    }
}
