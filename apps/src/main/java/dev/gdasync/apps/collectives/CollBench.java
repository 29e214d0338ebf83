package dev.gdasync.apps.collectives;

import dev.gdasync.apps.common.JitActivity;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.msccl.MscclKiLauncher;
import dev.gdasync.libmp.coll.msccl.MscclRuntime;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The benchmark mode: allreduce (in place, int32 SUM), alltoall (out of place), allgather (in place), bcast (from
 * rank 0) at each size and the barrier, with the gdasync methods of the models {@code --mode} asks for
 * ({@link BenchCalls}: the MSCCL program where one fits, blocking, on a host stream and from the KI executor, the
 * blocking built-in, the stream's and the KI form's generated built-ins), then with the baselines in child jobs
 * ({@link Baselines}: MPJ Express, Open MPI with {@code ompi}). The gdasync methods interleave rep by rep, each rep's
 * time is the slowest rank's, the median of the reps is reported, and every timed loop is followed by one checked
 * collective on fresh data; the baselines run the same cases the same way. Rank 0 reports
 * ({@link BenchReport}).
 */
final class CollBench {
    private final Bootstrap boot;
    private final Mp mp;
    private final Communicator comm;
    private final MscclRuntime rt;
    private final List<Long> sizes;
    private final int iters;
    private final int warmup;
    private final double warmupSeconds;
    private final int reps;
    /** The models asked for: host, sa, ki (the gdasync methods) and ompi (the Open MPI baseline). */
    private final List<String> modes;
    private final MscclKiLauncher ki;

    CollBench(Bootstrap boot, Mp mp, Communicator comm, MscclRuntime rt, List<Long> sizes, int iters, int warmup,
              double warmupSeconds, int reps, List<String> modes, MscclKiLauncher ki) {
        this.boot = boot;
        this.mp = mp;
        this.comm = comm;
        this.rt = rt;
        this.sizes = sizes;
        this.iters = iters;
        this.warmup = warmup;
        this.warmupSeconds = warmupSeconds;
        this.reps = reps;
        this.modes = modes;
        this.ki = ki;
    }

    /**
     * @param noMpj whether to leave MPJ Express out
     * @param csv   the CSV file, or null
     * @param plot  the plots' file name, or null
     * @return whether every check of this rank (rank 0: and of the baselines) passed
     */
    boolean run(boolean noMpj, Path csv, Path plot) throws IOException, InterruptedException {
        List<BenchCase> cases = BenchCase.plan(sizes, iters, warmup, comm.size());
        List<BenchRow> rows = new ArrayList<>();
        boolean ok = true;
        long max = sizes.stream().mapToLong(Long::longValue).max().orElse(8);
        try (HostStream stream = HostStream.create("collectives-bench-r" + comm.rank());
             BenchCalls calls = new BenchCalls(mp, comm, rt, stream, ki, max)) {
            // Warm-up passes over every case and method first, for warmupSeconds at least (rank 0's clock decides, the
            // others follow its answer): the JIT compiles what all of them run before any is timed, so the first case
            // does not carry the compilation of the others' shared paths. On 2 CPUs that takes seconds.
            long warmStart = System.nanoTime();
            boolean again = true;
            while (again) {
                warmPass(calls, cases);
                again = calls.agree(System.nanoTime() - warmStart < warmupSeconds * 1e9);
            }
            if (warmupSeconds > 0) {
                settle(calls, cases);
            }
            for (BenchCase c : cases) {
                List<String> methods = calls.methods(c, modes);
                double[][] us = new double[methods.size()][reps];
                for (int rep = -1; rep < reps; rep++) {
                    for (int k = 0; k < methods.size(); k++) {
                        int m = Math.floorMod(k + rep, methods.size());
                        double t = calls.time(c, methods.get(m), rep < 0 ? c.warmup() : c.iters());
                        ok &= calls.verify(c, methods.get(m));
                        if (rep >= 0) {
                            us[m][rep] = t;
                        }
                    }
                }
                for (int m = 0; m < methods.size(); m++) {
                    rows.add(new BenchRow(c.collective().label(), methods.get(m), comm.size(), c.bytes(), c.iters(),
                            us[m]));
                }
            }
        }
        if (comm.rank() == 0) {
            System.out.println("collectives: " + (ok ? "every timed loop's check passed" : "A CHECK FAILED"));
        }
        ok &= new Baselines(boot, comm.size()).run(!noMpj, modes.contains("ompi"), reps, warmupSeconds, cases, rows);
        if (comm.rank() == 0) {
            BenchReport.write(rows, csv, plot, System.out);
        }
        return ok;
    }

    private void warmPass(BenchCalls calls, List<BenchCase> cases) {
        for (BenchCase c : cases) {
            for (String method : calls.methods(c, modes)) {
                calls.time(c, method, c.warmup());
            }
        }
    }

    /**
     * After the time-based warm-up, more passes until every rank's JIT compilers were quiet ({@link JitActivity#settle}:
     * a compiler thread takes its CPU from a spinning rank for milliseconds at a time); rank 0 says how long it took.
     */
    private void settle(BenchCalls calls, List<BenchCase> cases) {
        JitActivity.Ranks ranks = JitActivity.Ranks.of(calls::agree, calls::allAgree);
        String line = JitActivity.settle(ranks, () -> warmPass(calls, cases), warmupSeconds);
        if (comm.rank() == 0) {
            System.out.println(line);
        }
    }
}
