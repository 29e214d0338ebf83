package dev.gdasync.apps.gabench;

import dev.gdasync.apps.common.MpjStarter;
import dev.gdasync.apps.common.RankMain;
import dev.gdasync.apps.common.RootHeartbeat;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.libmp.ga.GlobalArrays;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code scripts/mprun -np 2 gabench}: rank 0 puts and gets patches of rank 1's block, contiguous and strided, with
 * the global-array layer (staged, and from registered buffers), with libmp's raw {@code iput}/{@code iget} of the same
 * bytes, and (in a JVM of its own) with MPJ Express's {@code Send}/{@code Recv}. The one-sided methods' reps are
 * interleaved (every method's rep k runs before any method's rep k + 1, in a rotating order); every timed loop is
 * followed by a check of the bytes it moved. Rank 1 only answers rank 0's heartbeats meanwhile.
 */
@Command(name = "scripts/mprun -np 2 gabench", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false,
        description = "Global-array put/get latency and bandwidth against raw window iput/iget and MPJ Express"
                + " Send/Recv: contiguous and strided patches from rank 0 to rank 1.")
public final class GaBench implements RankMain.App {
    static final List<String> ONE_SIDED = List.of("ga", "ga-reg", "raw");
    static final List<String> LAYOUTS = List.of("contig", "strided");

    @Option(names = "--sizes", split = ",", paramLabel = "BYTES",
            defaultValue = "8,32,128,512,2048,8192,32768,131072,524288,2097152,8388608,16777216",
            description = "patch sizes in bytes, multiples of 8 (and of --run-bytes above it) (default: ${DEFAULT-VALUE})")
    List<Integer> sizes;

    @Option(names = "--run-bytes", paramLabel = "BYTES", defaultValue = "512",
            description = "the longest row run of a strided patch; the strided array's rows are twice as long"
                    + " (default: ${DEFAULT-VALUE})")
    int runBytes;

    @Option(names = "--iters", paramLabel = "N", defaultValue = "1000",
            description = "operations per rep for small patches (default: ${DEFAULT-VALUE})")
    int iters;

    @Option(names = "--rep-bytes", paramLabel = "BYTES", defaultValue = "33554432",
            description = "the most bytes one rep moves: large patches get fewer operations, at least 2"
                    + " (default: ${DEFAULT-VALUE})")
    long repBytes;

    @Option(names = "--reps", paramLabel = "N", defaultValue = "5",
            description = "timed reps per size and method, after a warm-up rep; the median is reported"
                    + " (default: ${DEFAULT-VALUE})")
    int reps;

    @Option(names = "--warmup-ms", paramLabel = "MS", defaultValue = "3000",
            description = "how long every method first runs untimed at the smallest size (default: ${DEFAULT-VALUE})")
    long warmupMillis;

    @Option(names = "--no-mpj", description = "leave out the MPJ Express baseline")
    boolean noMpj;

    @Option(names = "--csv", paramLabel = "FILE", description = "also write the rows as CSV")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "also draw latency and bandwidth against size")
    Path plot;

    /** The options' plan, made by {@link #optionsProblem()}. */
    private Plan checkedPlan;

    private GaBench() {
    }

    /**
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        RankMain.main("gabench", "rank", new GaBench(), args);
    }

    @Override
    public String optionsProblem() {
        try {
            checkedPlan = plan();
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    @Override
    public boolean run(EnvBootstrap boot, Mp mp) throws Exception {
        try (GlobalArrays ga = new GlobalArrays(mp)) {
            if (mp.size() != 2) {
                throw new IllegalStateException("gabench runs with 2 ranks (-np 2), not " + mp.size());
            }
            run(boot, mp, ga, checkedPlan);
            ga.sync();
        }
        return true;
    }

    /** @return the plan of the options, checked */
    Plan plan() {
        Plan p = new Plan(sizes, runBytes, iters, repBytes, reps, warmupMillis);
        for (Path f : new Path[] {csv, plot}) {
            if (f != null && f.toAbsolutePath().getParent() != null && !Files.isDirectory(f.toAbsolutePath().getParent())) {
                throw new IllegalArgumentException("the folder of " + f + " does not exist");
            }
        }
        return p;
    }

    private void run(Bootstrap boot, Mp mp, GlobalArrays ga, Plan plan) throws Exception {
        try (OneSided one = new OneSided(mp, ga, plan.geometry())) {
            RootHeartbeat heartbeat = new RootHeartbeat(boot, "gabench");
            if (mp.rank() != 0) {
                // Rank 0 measures; this rank's block is its target.
                heartbeat.awaitEnd();
                return;
            }
            List<Row> rows = new ArrayList<>();
            try {
                rows.addAll(measure(heartbeat, one, plan));
                String home = System.getenv(MpjStarter.MPJ_HOME);
                String missing = MpjStarter.missing(home);
                if (noMpj) {
                    System.out.println("gabench: the MPJ Express baseline is left out (--no-mpj)");
                } else if (missing != null) {
                    System.out.println("gabench: the MPJ Express baseline is left out: " + missing);
                } else {
                    rows.addAll(MpjRunner.run(home, plan, heartbeat::beat));
                }
            } finally {
                heartbeat.end();
            }
            rows.sort(java.util.Comparator.comparing(Row::op).reversed().thenComparing(Row::layout).thenComparingInt(Row::bytes));
            System.out.println("gabench: all data checks passed (" + rows.size() + " rows)");
            Report.table(rows, System.out);
            if (csv != null) {
                Report.writeCsv(rows, csv);
                System.out.println("gabench: wrote " + csv);
            }
            if (plot != null) {
                BenchPlot.write(rows, plot);
                System.out.println("gabench: wrote " + plot);
            }
        }
    }

    /** Rank 0's one-sided measurements: per size, reps interleaved over methods; each loop's bytes checked. */
    private static List<Row> measure(RootHeartbeat heartbeat, OneSided one, Plan plan) {
        Geometry geo = plan.geometry();
        List<Row> rows = new ArrayList<>();
        long generation = 1;
        long warmupEnd = System.nanoTime() + plan.warmupMillis() * 1_000_000;
        int first = plan.sizes().getFirst();
        while (System.nanoTime() - warmupEnd < 0) {
            heartbeat.beat();
            for (String method : ONE_SIDED) {
                for (String layout : LAYOUTS) {
                    one.prepare(method, first, generation++);
                    one.time(method, layout, "put", first, plan.iters(first));
                    one.verifyPut(method, layout, first);
                    one.time(method, layout, "get", first, plan.iters(first));
                    one.verifyGet(method, layout, first);
                }
            }
        }
        for (int bytes : plan.sizes()) {
            int iters = plan.iters(bytes);
            double[][][][] us = new double[ONE_SIDED.size()][LAYOUTS.size()][2][plan.reps()];
            for (int rep = -1; rep < plan.reps(); rep++) {
                heartbeat.beat();
                for (int k = 0; k < ONE_SIDED.size(); k++) {
                    // A rotating order, so that no method always runs right after another's large copies.
                    int m = Math.floorMod(k + rep, ONE_SIDED.size());
                    String method = ONE_SIDED.get(m);
                    for (int l = 0; l < LAYOUTS.size(); l++) {
                        String layout = LAYOUTS.get(l);
                        one.prepare(method, bytes, generation++);
                        double put = one.time(method, layout, "put", bytes, iters);
                        one.verifyPut(method, layout, bytes);
                        one.spoil(method, bytes);
                        double get = one.time(method, layout, "get", bytes, iters);
                        one.verifyGet(method, layout, bytes);
                        if (rep >= 0) {
                            us[m][l][0][rep] = put;
                            us[m][l][1][rep] = get;
                        }
                    }
                }
            }
            for (int m = 0; m < ONE_SIDED.size(); m++) {
                for (int l = 0; l < LAYOUTS.size(); l++) {
                    int runs = LAYOUTS.get(l).equals("strided") ? geo.runs(bytes) : 1;
                    rows.add(new Row(ONE_SIDED.get(m), LAYOUTS.get(l), "put", bytes, runs, iters, us[m][l][0]));
                    rows.add(new Row(ONE_SIDED.get(m), LAYOUTS.get(l), "get", bytes, runs, iters, us[m][l][1]));
                }
            }
            System.out.printf(java.util.Locale.ROOT, "gabench: %d bytes done (%d ops per rep)%n", bytes, iters);
        }
        return rows;
    }
}
