package dev.gdasync.apps.collectives;

import dev.gdasync.apps.bench.MpjChildJob;
import mpi.MPI;

import java.util.ArrayList;
import java.util.List;

/**
 * The MPJ Express baseline of the benchmark, run by rank 0 as a child job ({@link MpjChildJob}, multicore device,
 * as many ranks as the gdasync job): {@code Allreduce} (int SUM, out of place: MPJ has no in-place form) and
 * {@code Alltoall} of int arrays at each size, reps of {@code iters} collectives, the slowest rank's time, one
 * checked collective after each rep. Rank 0 prints a {@value #RESULT} line per row; a failed rank prints
 * {@value #ERROR} and exits with status 3.
 */
public final class MpjCollBench {
    static final String RESULT = "COLLECTIVES-MPJ-RESULT";
    static final String ERROR = "COLLECTIVES-MPJ-ERROR";

    private MpjCollBench() {
    }

    static String missing(String home) {
        return MpjChildJob.missing(home);
    }

    /** The child's arguments: reps, then size:iters pairs. */
    static List<String> args(List<Long> sizes, CollBench bench, int reps) {
        List<String> a = new ArrayList<>();
        a.add(Integer.toString(reps));
        for (long s : sizes) {
            a.add(s + ":" + bench.iters(s));
        }
        return a;
    }

    /**
     * @param args MPJ's arguments, then {@link #args}'s
     * @throws Exception if MPJ fails to start
     */
    public static void main(String[] args) throws Exception {
        String[] mine = MPI.Init(args);
        try {
            run(mine);
        } catch (Throwable t) {
            System.err.println(ERROR + " rank " + MPI.COMM_WORLD.Rank() + ": " + t);
            System.err.flush();
            System.exit(3);
        }
        MPI.Finalize();
    }

    private static void run(String[] args) {
        int reps = Integer.parseInt(args[0]);
        int n = MPI.COMM_WORLD.Size();
        int me = MPI.COMM_WORLD.Rank();
        for (String coll : List.of("allreduce", "alltoall")) {
            for (int k = 1; k < args.length; k++) {
                String[] f = args[k].split(":");
                long bytes = Long.parseLong(f[0]);
                int iters = Integer.parseInt(f[1]);
                int count = (int) (coll.equals("allreduce") ? bytes / 4 : bytes / 4 / n);
                if (count == 0) {
                    continue;
                }
                int total = coll.equals("allreduce") ? count : count * n;
                int[] send = new int[total];
                int[] recv = new int[total];
                for (int i = 0; i < total; i++) {
                    send[i] = ProgramCheck.in(me, i);
                }
                double[] us = new double[reps];
                double[] t = new double[1];
                double[] slowest = new double[1];
                for (int rep = -1; rep < reps; rep++) {
                    MPI.COMM_WORLD.Barrier();
                    long t0 = System.nanoTime();
                    for (int i = 0; i < iters; i++) {
                        once(coll, send, recv, count);
                    }
                    t[0] = (System.nanoTime() - t0) / 1e3 / iters;
                    MPI.COMM_WORLD.Allreduce(t, 0, slowest, 0, 1, MPI.DOUBLE, MPI.MAX);
                    if (rep >= 0) {
                        us[rep] = slowest[0];
                    }
                    check(coll, recv, count, n, me);
                }
                if (me == 0) {
                    System.out.println(RESULT + " " + new BenchRow(coll, "mpj", n, bytes, iters, us).csv());
                }
            }
        }
    }

    private static void once(String coll, int[] send, int[] recv, int count) {
        if (coll.equals("allreduce")) {
            MPI.COMM_WORLD.Allreduce(send, 0, recv, 0, count, MPI.INT, MPI.SUM);
        } else {
            MPI.COMM_WORLD.Alltoall(send, 0, count, MPI.INT, recv, 0, count, MPI.INT);
        }
    }

    private static void check(String coll, int[] recv, int count, int n, int me) {
        for (int i = 0; i < (coll.equals("allreduce") ? count : count * n); i++) {
            int want = 0;
            if (coll.equals("allreduce")) {
                for (int r = 0; r < n; r++) {
                    want += ProgramCheck.in(r, i);
                }
            } else {
                want = ProgramCheck.in(i / count, (long) me * count + i % count);
            }
            if (recv[i] != want) {
                throw new IllegalStateException(coll + " of " + count + " ints: element " + i + " is " + recv[i]
                        + ", want " + want);
            }
        }
    }
}
