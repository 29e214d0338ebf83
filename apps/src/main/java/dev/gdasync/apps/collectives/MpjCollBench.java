package dev.gdasync.apps.collectives;

import dev.gdasync.apps.common.MpjProgram;
import mpi.MPI;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The MPJ Express baseline of the benchmark, run by rank 0 as a child job ({@link dev.gdasync.apps.common.MpjStarter}, multicore device,
 * as many ranks as the gdasync job): {@code Allreduce} (int SUM), {@code Alltoall}, {@code Allgather} (out of place:
 * MPJ has no in-place forms), {@code Bcast} from rank 0 and {@code Barrier} of int arrays in the cases and reps of
 * the Java ranks ({@link BenchCase}): first a warm-up pass over every case, then per case a warm-up rep and the reps,
 * each a barrier, {@code iters} collectives timed, the slowest rank's time, then one collective on fresh data checked. Rank 0 prints a {@value #RESULT} line per case; a failed rank prints
 * {@value #ERROR} and exits with status 3.
 */
public final class MpjCollBench {
    static final String RESULT = "COLLECTIVES-MPJ-RESULT";
    static final String ERROR = "COLLECTIVES-MPJ-ERROR";
    private static final long BARRIER_SKEW_NANOS = 1_000_000;

    private MpjCollBench() {
    }

    /** The child's arguments: reps, then a {@code COLL:BYTES:ITERS} per case. */
    static List<String> args(int reps, double warmupSeconds, List<BenchCase> cases) {
        List<String> a = new ArrayList<>();
        a.add(Integer.toString(reps));
        a.add(Double.toString(warmupSeconds));
        cases.forEach(c -> a.add(c.arg()));
        return a;
    }

    /**
     * @param args MPJ's arguments, then {@link #args}'s
     */
    public static void main(String[] args) {
        MpjProgram.main(args, ERROR, MpjCollBench::run);
    }

    private static void run(String[] args) {
        int reps = Integer.parseInt(args[0]);
        double warmupSeconds = Double.parseDouble(args[1]);
        int n = MPI.COMM_WORLD.Size();
        int me = MPI.COMM_WORLD.Rank();
        List<BenchCase> cases = new ArrayList<>();
        for (int k = 2; k < args.length; k++) {
            cases.add(BenchCase.parse(args[k]));
        }
        // Warm-up passes over every case first, for as long as the gdasync ranks' (MPJ Express is compiled by the JIT
        // too); rank 0's clock decides.
        long start = System.nanoTime();
        int[] again = {1};
        while (again[0] == 1) {
            for (BenchCase c : cases) {
                warmUp(c, n, me);
            }
            again[0] = System.nanoTime() - start < warmupSeconds * 1e9 ? 1 : 0;
            MPI.COMM_WORLD.Bcast(again, 0, 1, MPI.INT, 0);
        }
        for (BenchCase c : cases) {
            measure(c, n, me, reps);
        }
    }

    private static void warmUp(BenchCase c, int n, int me) {
        int count = Math.toIntExact(c.count(n));
        int[] send = new int[c.collective() == BenchCollective.ALLTOALL ? count * n : count];
        int[] recv = new int[Math.toIntExact(c.collective().resultInts(count, n))];
        fill(c.collective(), send, count, me);
        MPI.COMM_WORLD.Barrier();
        for (int i = 0; i < c.warmup(); i++) {
            once(c.collective(), send, recv, count);
        }
    }

    private static void measure(BenchCase c, int n, int me, int reps) {
        int count = Math.toIntExact(c.count(n));
        int[] send = new int[c.collective() == BenchCollective.ALLTOALL ? count * n : count];
        int[] recv = new int[Math.toIntExact(c.collective().resultInts(count, n))];
        double[] us = new double[reps];
        double[] t = new double[1];
        double[] slowest = new double[1];
        for (int rep = -1; rep < reps; rep++) {
            fill(c.collective(), send, count, me);
            MPI.COMM_WORLD.Barrier();
            long t0 = System.nanoTime();
            int calls = rep < 0 ? c.warmup() : c.iters();
            for (int i = 0; i < calls; i++) {
                once(c.collective(), send, recv, count);
            }
            t[0] = (System.nanoTime() - t0) / 1e3 / calls;
            MPI.COMM_WORLD.Allreduce(t, 0, slowest, 0, 1, MPI.DOUBLE, MPI.MAX);
            if (rep >= 0) {
                us[rep] = slowest[0];
            }
            check(c.collective(), send, recv, count, n, me);
        }
        if (me == 0) {
            System.out.println(RESULT + " " + BenchRow.childLine(c, us));
        }
    }

    private static void fill(BenchCollective c, int[] send, int count, int me) {
        int total = c == BenchCollective.ALLTOALL ? send.length : count;
        for (int i = 0; i < total; i++) {
            send[i] = c == BenchCollective.BCAST ? (me == 0 ? ProgramCheck.in(0, i) : -1) : ProgramCheck.in(me, i);
        }
    }

    private static void once(BenchCollective c, int[] send, int[] recv, int count) {
        switch (c) {
            case ALLREDUCE -> MPI.COMM_WORLD.Allreduce(send, 0, recv, 0, count, MPI.INT, MPI.SUM);
            case ALLTOALL -> MPI.COMM_WORLD.Alltoall(send, 0, count, MPI.INT, recv, 0, count, MPI.INT);
            case ALLGATHER -> MPI.COMM_WORLD.Allgather(send, 0, count, MPI.INT, recv, 0, count, MPI.INT);
            case BCAST -> MPI.COMM_WORLD.Bcast(send, 0, count, MPI.INT, 0);
            case BARRIER -> MPI.COMM_WORLD.Barrier();
        }
    }

    /** One collective on fresh data, checked; the barrier: no rank leaves before the last one, held back, entered. */
    private static void check(BenchCollective c, int[] send, int[] recv, int count, int n, int me) {
        if (c == BenchCollective.BARRIER) {
            if (me == n - 1) {
                long until = System.nanoTime() + BARRIER_SKEW_NANOS;
                while (System.nanoTime() < until) {
                    LockSupport.parkNanos(until - System.nanoTime());
                }
            }
            long[] times = {System.nanoTime(), 0};
            MPI.COMM_WORLD.Barrier();
            times[1] = -System.nanoTime();
            long[] max = new long[2];
            MPI.COMM_WORLD.Allreduce(times, 0, max, 0, 2, MPI.LONG, MPI.MAX);
            if (-max[1] < max[0]) {
                throw new IllegalStateException("barrier: a rank left it " + (max[0] + max[1])
                        + " ns before the last one entered");
            }
            return;
        }
        fill(c, send, count, me);
        once(c, send, recv, count);
        int[] out = c == BenchCollective.BCAST ? send : recv;
        for (int i = 0; i < c.resultInts(count, n); i++) {
            int want = c.expected(me, n, count, i);
            if (out[i] != want) {
                throw new IllegalStateException(c.label() + " of " + count + " ints: element " + i + " is " + out[i]
                        + ", want " + want);
            }
        }
    }
}
