package dev.gdasync.apps.collectives;

import dev.gdasync.apps.bench.MpjChildJob;
import dev.gdasync.apps.pingpong.LatencyPlot;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.msccl.Collective;
import dev.gdasync.libmp.coll.msccl.MscclKiLauncher;
import dev.gdasync.libmp.coll.msccl.MscclRuntime;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.reduce.ReducingCollectives;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The benchmark mode: allreduce (in place, int32 SUM) and alltoall (out of place, int32) at each size, with the
 * MSCCL program the runtime selects (where one fits the call), blocking ({@code msccl}) and enqueued on a host stream
 * ({@code msccl-sa}; where none fits, the stream's all-pairs built-in, {@code allpairs-sa}) and run by the blocks of
 * the host KI executor ({@code msccl-ki}, {@code allpairs-ki}), as {@code --mode} asks, with the blocking
 * built-in algorithm, and with MPJ Express
 * (in a child job, {@link MpjCollBench}); reps interleave the methods, each rep's time is the slowest rank's, and
 * every timed loop is followed by one checked collective on fresh data.
 */
final class CollBench {
    private static final long REP_BYTES = 64L << 20;

    private final Mp mp;
    private final Communicator comm;
    private final MscclRuntime rt;
    private final List<Long> sizes;
    private final int iters;
    private final int reps;
    /** The caller's stream of the sa methods. */
    private HostStream stream;

    /** The models measured (host, sa, ki) and the ki model's launcher (null without it). */
    private final List<String> modes;
    private final MscclKiLauncher ki;

    CollBench(Mp mp, Communicator comm, MscclRuntime rt, List<Long> sizes, int iters, int reps, List<String> modes,
              MscclKiLauncher ki) {
        this.modes = modes;
        this.ki = ki;
        this.mp = mp;
        this.comm = comm;
        this.rt = rt;
        this.sizes = sizes;
        this.iters = iters;
        this.reps = reps;
    }

    int iters(long bytes) {
        return (int) Math.max(2, Math.min(iters, REP_BYTES / bytes));
    }

    boolean run(boolean noMpj, Path csv, Path plot) throws IOException, InterruptedException {
        List<BenchRow> rows = new ArrayList<>();
        boolean ok = true;
        long max = sizes.stream().mapToLong(Long::longValue).max().orElse(8);
        MemorySegment a = mp.allocate(max);
        MemorySegment b = mp.allocate(max);
        MpRegistration ar = mp.register(a);
        MpRegistration br = mp.register(b);
        try (ReducingCollectives builtin = ReducingCollectives.of(comm);
             HostStream s = HostStream.create("collectives-bench-r" + comm.rank())) {
            stream = s;
            for (String coll : List.of("allreduce", "alltoall")) {
                for (long bytes : sizes) {
                    long count = coll.equals("allreduce") ? bytes / 4 : bytes / 4 / comm.size();
                    if (count == 0) {
                        continue;
                    }
                    boolean program = programFits(coll, count);
                    List<String> methods = methods(program);
                    double[][] us = new double[methods.size()][reps];
                    for (int rep = -1; rep < reps; rep++) {
                        for (int k = 0; k < methods.size(); k++) {
                            int m = Math.floorMod(k + rep, methods.size());
                            double t = time(builtin, coll, methods.get(m), count, a, ar, b, br, iters(bytes));
                            ok &= verify(builtin, coll, methods.get(m), count, a, ar, b, br);
                            if (rep >= 0) {
                                us[m][rep] = t;
                            }
                        }
                    }
                    for (int m = 0; m < methods.size(); m++) {
                        rows.add(new BenchRow(coll, methods.get(m), comm.size(), bytes, iters(bytes), us[m]));
                    }
                }
            }
        } finally {
            mp.deregister(ar);
            mp.deregister(br);
            mp.free(a);
            mp.free(b);
        }
        mpjBaseline(noMpj, rows);
        if (comm.rank() == 0) {
            System.out.println("collectives: " + (ok ? "every timed loop's check passed" : "A CHECK FAILED"));
            report(rows, csv, plot);
        }
        return ok;
    }

    /**
     * Rank 0 runs MPJ Express's job while the other ranks wait for its heartbeats (a broadcast of 1 every half
     * second, then 0), so no rank's collective times out meanwhile.
     */
    private void mpjBaseline(boolean noMpj, List<BenchRow> rows) throws IOException, InterruptedException {
        MemorySegment beat = mp.allocate(8);
        MpRegistration reg = mp.register(beat);
        try (ReducingCollectives hb = ReducingCollectives.of(comm)) {
            if (comm.rank() != 0) {
                do {
                    hb.broadcast(beat, reg, 1, DataType.INT32, 0);
                } while (beat.get(ValueLayout.JAVA_INT, 0) == 1);
                return;
            }
            String home = System.getenv("MPJ_HOME");
            String missing = MpjCollBench.missing(home);
            Runnable heartbeat = () -> {
                beat.set(ValueLayout.JAVA_INT, 0, 1);
                hb.broadcast(beat, reg, 1, DataType.INT32, 0);
            };
            try {
                if (noMpj) {
                    System.out.println("collectives: the MPJ Express baseline is left out (--no-mpj)");
                } else if (missing != null) {
                    System.out.println("collectives: the MPJ Express baseline is left out: " + missing);
                } else {
                    for (String line : MpjChildJob.run(home, comm.size(), MpjCollBench.class.getName(),
                            MpjCollBench.args(sizes, this, reps), MpjCollBench.RESULT, MpjCollBench.ERROR, heartbeat)) {
                        rows.add(BenchRow.parse(line));
                    }
                }
            } finally {
                beat.set(ValueLayout.JAVA_INT, 0, 0);
                hb.broadcast(beat, reg, 1, DataType.INT32, 0);
            }
        } finally {
            mp.deregister(reg);
            mp.free(beat);
        }
    }

    /**
     * The methods of the models asked for: host the blocking program ({@code msccl}) and the blocking built-in, sa and
     * ki the program (or, where none fits, the generated all-pairs built-in) on a stream and from the KI executor.
     */
    private List<String> methods(boolean program) {
        List<String> m = new ArrayList<>();
        if (modes.contains("host")) {
            if (program) {
                m.add("msccl");
            }
            m.add("built-in");
        }
        for (String model : List.of("sa", "ki")) {
            if (modes.contains(model)) {
                m.add((program ? "msccl-" : "allpairs-") + model);
            }
        }
        return m;
    }

    /** Whether the runtime would run a program for this call (the same rule it applies itself). */
    private boolean programFits(String coll, long count) {
        int n = comm.size();
        return coll.equals("allreduce")
                ? rt.programs().select(Collective.ALLREDUCE, true, n, count * 4, count).isPresent()
                : rt.programs().select(Collective.ALLTOALL, false, n, count * 4, count * n).isPresent();
    }

    /** @return the slowest rank's microseconds per collective */
    private double time(ReducingCollectives builtin, String coll, String method, long count, MemorySegment a,
                        MpRegistration ar, MemorySegment b, MpRegistration br, int n) {
        fill(a, count * (coll.equals("allreduce") ? 1 : comm.size()));
        builtin.allreduce(b, br, b, br, 0, DataType.INT32, ReduceOp.SUM);
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            once(builtin, coll, method, count, a, ar, b, br);
        }
        stream.synchronize();
        double mine = (System.nanoTime() - t0) / 1e3 / n;
        MemorySegment w = b.asSlice(0, 8);
        w.set(ValueLayout.JAVA_DOUBLE, 0, mine);
        builtin.allreduce(w, br, w, br, 1, DataType.FLOAT64, ReduceOp.MAX);
        return w.get(ValueLayout.JAVA_DOUBLE, 0);
    }

    private void once(ReducingCollectives builtin, String coll, String method, long count, MemorySegment a,
                      MpRegistration ar, MemorySegment b, MpRegistration br) {
        boolean msccl = method.equals("msccl");
        if (method.endsWith("-sa")) {
            // Enqueued: a timed loop queues them back to back and waits for the stream once at its end.
            if (coll.equals("allreduce")) {
                rt.allreduceOnStream(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM, stream);
            } else {
                rt.alltoallOnStream(comm, a, ar, b, br, count, DataType.INT32, stream);
            }
        } else if (method.endsWith("-ki")) {
            // Run by the KI executor's blocks: the call returns when the launch ended.
            if (coll.equals("allreduce")) {
                rt.allreduceKi(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM, ki);
            } else {
                rt.alltoallKi(comm, a, ar, b, br, count, DataType.INT32, ki);
            }
        } else if (coll.equals("allreduce")) {
            if (msccl) {
                rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM).orElseThrow();
            } else {
                builtin.allreduce(a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM);
            }
        } else if (msccl) {
            rt.alltoall(comm, a, ar, b, br, count, DataType.INT32).orElseThrow();
        } else {
            builtin.alltoall(a, ar, b, br, count, DataType.INT32);
        }
    }

    private boolean verify(ReducingCollectives builtin, String coll, String method, long count, MemorySegment a,
                           MpRegistration ar, MemorySegment b, MpRegistration br) {
        int n = comm.size();
        int me = comm.rank();
        fill(a, count * (coll.equals("allreduce") ? 1 : n));
        once(builtin, coll, method, count, a, ar, b, br);
        stream.synchronize();
        long wrong = 0;
        if (coll.equals("allreduce")) {
            for (long i = 0; i < count; i++) {
                int want = 0;
                for (int r = 0; r < n; r++) {
                    want += ProgramCheck.in(r, i);
                }
                wrong += a.getAtIndex(ValueLayout.JAVA_INT, i) != want ? 1 : 0;
            }
        } else {
            for (int r = 0; r < n; r++) {
                for (long i = 0; i < count; i++) {
                    wrong += b.getAtIndex(ValueLayout.JAVA_INT, r * count + i) != ProgramCheck.in(r, me * count + i) ? 1 : 0;
                }
            }
        }
        if (wrong > 0) {
            System.err.println("collectives: rank " + me + ": " + method + " " + coll + " of " + count + " int32: "
                    + wrong + " wrong elements");
        }
        return wrong == 0;
    }

    private void fill(MemorySegment m, long count) {
        for (long i = 0; i < count; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, ProgramCheck.in(comm.rank(), i));
        }
    }

    static Path plotFile(Path plot, String coll) {
        String name = plot.getFileName().toString();
        String base = name.endsWith(".png") ? name.substring(0, name.length() - 4) : name;
        return plot.resolveSibling(base + "-" + coll + ".png");
    }

    static void report(List<BenchRow> rows, Path csv, Path plot) throws IOException {
        System.out.printf("%-10s %-11s %5s %10s %6s %12s %10s%n", "collective", "method", "ranks", "bytes", "iters",
                "median_us", "MB/s");
        for (BenchRow r : rows) {
            System.out.printf("%-10s %-11s %5d %10d %6d %12.2f %10.2f%n", r.collective(), r.method(), r.ranks(),
                    r.bytes(), r.iters(), r.medianMicros(), r.bytes() / r.medianMicros());
        }
        if (csv != null) {
            StringBuilder s = new StringBuilder(BenchRow.CSV_HEADER).append('\n');
            rows.forEach(r -> s.append(r.csv()).append('\n'));
            Files.writeString(csv, s);
            System.out.println("collectives: wrote " + csv);
        }
        if (plot != null) {
            // One picture per collective, a line per method: FILE.png becomes FILE-allreduce.png and FILE-alltoall.png.
            for (String coll : List.of("allreduce", "alltoall")) {
                List<LatencyPlot.Point> points = rows.stream().filter(r -> r.collective().equals(coll))
                        .map(r -> new LatencyPlot.Point(r.method(), (int) r.bytes(), r.medianMicros())).toList();
                if (points.isEmpty()) {
                    continue;
                }
                Path file = plotFile(plot, coll);
                LatencyPlot.write(points, coll + " on " + rows.getFirst().ranks() + " ranks: time per collective",
                        "time per collective (\u00b5s, log scale)", file);
                System.out.println("collectives: wrote " + file);
            }
        }
    }
}
