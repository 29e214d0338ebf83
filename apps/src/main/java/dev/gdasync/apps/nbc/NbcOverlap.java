package dev.gdasync.apps.nbc;

import dev.gdasync.apps.common.RankMain;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.libmp.coll.Collectives;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code scripts/mprun -np N --proxies nbc-overlap --coll ialltoall,iallgather,ibcast}: OSU's non-blocking
 * collective overlap benchmark (osu_ialltoall and its siblings) on the host engine and on the offload engine side
 * by side. Per collective and size: the pure communication time, then the overlapped loop with a dummy compute as
 * long as the pure time and {@code test} calls between its slices ({@code --compute busy}, OSU's), or one sleep as
 * long and no call ({@code --compute idle}: the CPU idles as while a GPU kernel runs), printed as OSU prints it
 * ({@code Overall(us) Compute(us) Pure Comm.(us) Overlap(%)}, averaged over the ranks). The engines alternate per
 * size, so both see the same machine state. Without {@code --proxies} only the host engine runs, and it says so.
 */
@Command(name = "scripts/mprun -np N [--proxies] nbc-overlap", mixinStandardHelpOptions = true,
        versionProvider = ProjectVersion.class, usageHelpAutoWidth = false,
        description = "Overlap of non-blocking collectives with computation (OSU's formula), host progress engine against"
                + " the offload engine (the collective proxy of mprun --proxies).")
public final class NbcOverlap implements CommandLines.Checked, RankMain.App {
    static final List<String> COLLECTIVES = List.of("ialltoall", "iallgather", "ibcast");
    static final List<String> ENGINES = List.of("host", "offload");

    @Option(names = "--coll", split = ",", paramLabel = "NAME", defaultValue = "ialltoall,iallgather,ibcast",
            description = "collectives to measure (default: ${DEFAULT-VALUE})")
    List<String> colls;

    @Option(names = "--engines", split = ",", paramLabel = "ENGINE", defaultValue = "host,offload",
            description = "progress engines: host, offload (default: ${DEFAULT-VALUE}; offload needs mprun --proxies)")
    List<String> engines;

    @Option(names = "--sizes", split = ",", paramLabel = "BYTES", defaultValue = "1024,4096,16384,65536,262144,1048576",
            description = "message sizes in bytes: per pair (alltoall), per rank (allgather), whole (bcast)"
                    + " (default: ${DEFAULT-VALUE})")
    List<Long> sizes;

    @Option(names = "--iters", paramLabel = "N", defaultValue = "100",
            description = "timed iterations per loop below 128 KiB (default: ${DEFAULT-VALUE})")
    int iters;

    @Option(names = "--large-iters", paramLabel = "N", defaultValue = "20",
            description = "timed iterations per loop from 128 KiB (default: ${DEFAULT-VALUE})")
    int largeIters;

    /** Bytes the warm-up moves at most per collective, engine and size. */
    private static final long WARMUP_BYTES = 64L << 20;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "20",
            description = "untimed iterations before each loop (default: ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--warmup-iters", paramLabel = "N", defaultValue = "5000",
            description = "untimed iterations of every collective on every engine at every size before the first timed"
                    + " loop (fewer for large sizes: 64 MiB moved at most), so that no row measures the JIT (default:"
                    + " ${DEFAULT-VALUE})")
    int warmupIters;

    @Option(names = "--slices", paramLabel = "N", defaultValue = "10",
            description = "the dummy compute's slices, with a test call after each (default: ${DEFAULT-VALUE})")
    int slices;

    @Option(names = "--compute", paramLabel = "KIND", defaultValue = "busy",
            description = "the dummy compute: busy (a busy loop in slices with a test call after each, OSU's) or idle"
                    + " (one sleep as long, no call: the CPU idles as while a GPU kernel runs, so only an engine that"
                    + " progresses by itself overlaps) (default: ${DEFAULT-VALUE})")
    String compute;

    @Option(names = "--csv", paramLabel = "FILE", description = "also write the rows as CSV (rank 0)")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "also draw overlap and pure time against size (rank 0)")
    Path plot;

    private NbcOverlap() {
    }

    @Override
    public void check() {
        for (String c : colls) {
            if (!COLLECTIVES.contains(c)) {
                throw new IllegalArgumentException("unknown collective '" + c + "': " + String.join(", ", COLLECTIVES));
            }
        }
        for (String e : engines) {
            if (!ENGINES.contains(e)) {
                throw new IllegalArgumentException("unknown engine '" + e + "': host or offload");
            }
        }
        if (sizes.stream().anyMatch(s -> s < 1 || s > (64L << 20))) {
            throw new IllegalArgumentException("sizes must be 1 … 64 MiB");
        }
        if (!compute.equals("busy") && !compute.equals("idle")) {
            throw new IllegalArgumentException("unknown compute '" + compute + "': busy or idle");
        }
        if (iters < 1 || largeIters < 1 || warmup < 0 || warmupIters < 0 || slices < 1) {
            throw new IllegalArgumentException("--iters, --large-iters and --slices must be >= 1, --warmup and"
                    + " --warmup-iters >= 0");
        }
        for (Path f : new Path[] {csv, plot}) {
            if (f != null && f.toAbsolutePath().getParent() != null && !Files.isDirectory(f.toAbsolutePath().getParent())) {
                throw new IllegalArgumentException("the folder of " + f + " does not exist");
            }
        }
    }

    /**
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        RankMain.main("nbc-overlap", "rank", new NbcOverlap(), args);
    }

    /** @return null: {@link #check()} ran when the options were read */
    @Override
    public String optionsProblem() {
        return null;
    }

    @Override
    public boolean run(EnvBootstrap boot, Mp mp) throws Exception {
        run(mp);
        return true;
    }

    private void run(Mp mp) throws Exception {
        boolean speaker = mp.rank() == 0;
        Map<String, Collectives> open = new LinkedHashMap<>();
        // The host engine also averages the figures over the ranks, so it is open even when not measured.
        Collectives host = Collectives.host(mp);
        try {
            open.put("host", host);
            if (engines.contains("offload")) {
                try {
                    open.put("offload", Collectives.offload(mp));
                } catch (IllegalStateException e) {
                    if (speaker) {
                        System.out.println("nbc-overlap: the offload engine is left out: " + e.getMessage());
                    }
                }
            }
            if (!engines.contains("host")) {
                open.remove("host");
            }
            // Every collective on every engine at every size first, untimed: the JIT compiles each size's path before
            // it is timed (on 2 CPUs its compiler threads otherwise take the CPU a rank waits on, for seconds).
            for (String coll : colls) {
                for (long bytes : sizes) {
                    for (Collectives c : open.values()) {
                        OverlapLoop loop = new OverlapLoop(c, coll, bytes, 1);
                        loop.pure((int) Math.min(warmupIters, Math.max(warmup, WARMUP_BYTES / bytes)), 1);
                        loop.close();
                    }
                }
            }
            List<OverlapRow> rows = new ArrayList<>();
            for (String coll : colls) {
                if (speaker) {
                    OverlapReport.header(coll, mp.size(), List.copyOf(open.keySet()), System.out);
                    System.out.println(compute.equals("idle")
                            ? "# Compute: idle, one sleep as long as the pure time and no test call (--compute idle)"
                            : "# Compute: busy, " + slices + " slices with a test call after each (--compute busy)");
                }
                for (long bytes : sizes) {
                    int n = bytes >= 128 * 1024 ? largeIters : iters;
                    List<OverlapRow> line = new ArrayList<>();
                    for (Map.Entry<String, Collectives> e : open.entrySet()) {
                        line.add(measure(host, e.getKey(), e.getValue(), coll, bytes, n));
                    }
                    if (speaker) {
                        OverlapReport.line(line, System.out);
                    }
                    rows.addAll(line);
                }
            }
            if (speaker && csv != null) {
                OverlapReport.writeCsv(rows, csv);
                System.out.println("nbc-overlap: wrote " + csv);
            }
            if (speaker && plot != null) {
                OverlapPlot.write(rows, plot);
                System.out.println("nbc-overlap: wrote " + plot);
            }
        } finally {
            for (Collectives c : open.values()) {
                c.close();
            }
            host.close();
        }
    }

    private OverlapRow measure(Collectives host, String engine, Collectives coll, String name, long bytes, int n) {
        OverlapLoop loop = new OverlapLoop(coll, name, bytes, compute.equals("idle") ? 0 : slices);
        try {
            double pure = average(host, loop.pure(warmup, n));
            double[] o = loop.overlapped(warmup, n, pure);
            return new OverlapRow(name, engine, bytes, coll.world().size(), n, average(host, o[0]), average(host, o[1]),
                    average(host, o[2]), pure);
        } finally {
            loop.close();
        }
    }

    /** @return the mean over the ranks of a value (OSU's avg), through the host engine's allgather */
    private static double average(Collectives host, double mine) {
        Mp mp = host.mp();
        int n = mp.size();
        MemorySegment mem = mp.allocate(8L * (n + 1));
        MpRegistration reg = mp.register(mem);
        try {
            mem.set(ValueLayout.JAVA_DOUBLE, 0, mine);
            host.world().allgather(mem.asSlice(0, 8), reg, mem.asSlice(8, 8L * n), reg);
            double sum = 0;
            for (int r = 0; r < n; r++) {
                sum += mem.get(ValueLayout.JAVA_DOUBLE, 8 + 8L * r);
            }
            return sum / n;
        } finally {
            mp.deregister(reg);
            mp.free(mem);
        }
    }
}
