package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A benchmark, not a test: the blocking host interpreter against the built-in collective of the same kind and
 * against the floor of the program's algorithm, side by side in one run. The floor is the program's rounds of
 * hand-offs in a row with no data and no interpreter: flags stored and awaited through mapped memory, idling as the
 * interpreter does (ring allreduce 2 (n − 1) rounds to the next rank; ring allgather n − 1; recursive
 * doubling/halving 2 log2 n with partners at distance n/2 … 1 … n/2; all-pairs alltoall one round with every rank).
 * <pre>
 * scripts/mprun --classpath libmp/target/test-classes -np 2 dev.gdasync.libmp.coll.msccl.MscclHostBench \
 *     [--xml FILE_OR_DIR]... [--sizes 8,4096,...] [--iters 2000] [--reps 5] [--colls allreduce,alltoall,allgather]
 *     [--threads] [--slot-bytes 65536] [--csv FILE] [--verbose]
 * </pre>
 * The three methods rotate rep by rep (the first rep is a warm-up, not counted); each rank times every call. A rep's
 * figure is the slowest rank's p50 of its calls; the table shows the median over reps of it, the slowest rank's p99
 * over all counted calls, and the ratios as medians over reps of msccl's p50 over the built-in's and over the
 * floor's in the same rep (they run back to back, so a machine that changes speed between reps changes all three).
 * Every timed loop of a collective is followed by a checked call on fresh data.
 */
public final class MscclHostBench {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final String[] METHODS = {"msccl", "built-in", "floor"};

    private MscclHostBench() {
    }

    /**
     * @param args see the class comment
     * @throws Exception anything
     */
    public static void main(String[] args) throws Exception {
        List<Path> xml = new ArrayList<>();
        long[] sizes = {8, 64, 512, 4096, 32768, 262144, 1048576};
        int iters = 2000;
        int reps = 5;
        List<String> colls = List.of("allreduce", "alltoall", "allgather");
        boolean threads = false;
        boolean verbose = false;
        int slotBytes = 64 * 1024;
        Path csv = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--xml" -> xml.add(Path.of(args[++i]));
                case "--sizes" -> sizes = Arrays.stream(args[++i].split(",")).mapToLong(Long::parseLong).toArray();
                case "--iters" -> iters = Integer.parseInt(args[++i]);
                case "--reps" -> reps = Integer.parseInt(args[++i]);
                case "--colls" -> colls = List.of(args[++i].split(","));
                case "--threads" -> threads = true;
                case "--slot-bytes" -> slotBytes = Integer.parseInt(args[++i]);
                case "--csv" -> csv = Path.of(args[++i]);
                case "--verbose" -> verbose = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        MscclPrograms programs = MscclPrograms.load(xml, MscclLimits.defaults());
        MscclConfig config = MscclConfig.defaults().withSlotBytes(slotBytes).withThreads(threads);
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot);
             Collectives coll = Collectives.open(mp);
             MscclRuntime rt = MscclRuntime.open(coll, programs, config)) {
            new Run(mp, coll.world(), rt, iters, reps, verbose).all(colls, sizes, csv, threads);
        }
    }

    private static final class Run {
        private final Mp mp;
        private final Communicator comm;
        private final MscclRuntime rt;
        private final int iters;
        private final int reps;
        private final boolean verbose;
        private MemorySegment floorWords;
        private MemorySegment[] floorPeers;
        private long floorRound;
        private final StringBuilder rows = new StringBuilder(
                "collective,method,ranks,bytes,iters,p50_us,p99_us,ratio_to_builtin,ratio_to_floor\n");

        Run(Mp mp, Communicator comm, MscclRuntime rt, int iters, int reps, boolean verbose) {
            this.verbose = verbose;
            this.mp = mp;
            this.comm = comm;
            this.rt = rt;
            this.iters = iters;
            this.reps = reps;
        }

        void all(List<String> colls, long[] sizes, Path csv, boolean threads) throws Exception {
            String load0 = Files.readString(Path.of("/proc/loadavg")).trim();
            mapFloor();
            if (comm.rank() == 0) {
                System.out.printf(Locale.ROOT, "msccl-bench: %d ranks, blocks %s; load %s%n", comm.size(),
                        threads ? "on threads" : "on the caller's thread", load0);
                System.out.printf(Locale.ROOT, "%-10s %-9s %9s %7s %10s %10s %7s %7s%n", "collective", "method",
                        "bytes", "iters", "p50_us", "p99_us", "ratio", "/floor");
            }
            long max = Arrays.stream(sizes).max().orElse(8);
            MemorySegment a = mp.allocate(max * comm.size());
            MemorySegment b = mp.allocate(max * comm.size());
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            for (String c : colls) {
                for (long bytes : sizes) {
                    long count = c.equals("allreduce") ? bytes / 4 : bytes / 4 / comm.size();
                    if (count == 0) {
                        continue;
                    }
                    if (!programRuns(c, count, a, ar, b, br)) {
                        continue;
                    }
                    int n = (int) Math.max(20, Math.min(iters, (256L << 20) / Math.max(bytes, 1) / comm.size()));
                    int[][] rounds = rounds(c);
                    int k = rounds.length;
                    long[][] all = new long[3][reps * n];
                    double[][] repP50 = new double[3][reps];
                    for (int rep = 0; rep <= reps; rep++) {
                        for (int j = 0; j < 3; j++) {
                            int m = (j + rep) % 3;
                            long[] times = m == 2 ? floor(rounds, n) : time(c, m == 0, count, a, ar, b, br, n);
                            if (m < 2) {
                                check(c, m == 0, count, a, ar, b, br);
                            }
                            double p50 = slowest(new double[] {percentiles(times)[0]}, b, br)[0];
                            if (rep > 0) {
                                System.arraycopy(times, 0, all[m], (rep - 1) * n, n);
                                repP50[m][rep - 1] = p50;
                            }
                            if (verbose && comm.rank() == 0) {
                                System.out.printf(Locale.ROOT, "  rep %d %-9s p50 %.3f us (slowest rank)%n", rep,
                                        METHODS[m], p50);
                            }
                        }
                    }
                    double[] ratio = new double[reps];
                    double[] toFloor = new double[reps];
                    for (int r = 0; r < reps; r++) {
                        ratio[r] = repP50[0][r] / repP50[1][r];
                        toFloor[r] = repP50[0][r] / repP50[2][r];
                    }
                    double[][] t = new double[3][];
                    for (int m = 0; m < 3; m++) {
                        double[] pc = percentiles(all[m]);
                        t[m] = slowest(new double[] {median(repP50[m]), pc[1]}, b, br);
                    }
                    if (comm.rank() == 0) {
                        for (int m = 0; m < 3; m++) {
                            String method = m == 2 ? "floor/" + k : METHODS[m];
                            System.out.printf(Locale.ROOT, "%-10s %-9s %9d %7d %10.3f %10.3f %7s %7s%n", c, method,
                                    bytes, n * reps, t[m][0], t[m][1],
                                    m == 0 ? String.format(Locale.ROOT, "%.2f", median(ratio)) : "",
                                    m == 0 ? String.format(Locale.ROOT, "%.2f", median(toFloor)) : "");
                            rows.append(String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%.4f,%.4f,%.4f,%.4f%n", c, method,
                                    comm.size(), bytes, n * reps, t[m][0], t[m][1], m == 0 ? median(ratio) : 0,
                                    m == 0 ? median(toFloor) : 0));
                        }
                    }
                }
            }
            String load1 = Files.readString(Path.of("/proc/loadavg")).trim();
            if (comm.rank() == 0) {
                System.out.println("msccl-bench: load at the end " + load1);
                if (csv != null) {
                    Files.writeString(csv, rows);
                }
            }
            mp.deregister(ar);
            mp.deregister(br);
        }

        private boolean programRuns(String c, long count, MemorySegment a, MpRegistration ar, MemorySegment b,
                                    MpRegistration br) {
            fill(a, count * comm.size());
            boolean runs = call(c, true, count, a, ar, b, br);
            MemorySegment w = b.asSlice(0, 8);
            w.set(ValueLayout.JAVA_LONG, 0, runs ? 1 : 0);
            comm.allreduce(w, br, w, br, 1, DataType.INT64, ReduceOp.MIN);
            return w.get(ValueLayout.JAVA_LONG, 0) == 1;
        }

        /** @return whether a program ran (msccl) */
        private boolean call(String c, boolean msccl, long count, MemorySegment a, MpRegistration ar, MemorySegment b,
                             MpRegistration br) {
            int n = comm.size();
            switch (c) {
                case "allreduce" -> {
                    if (msccl) {
                        return rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM).isPresent();
                    }
                    comm.allreduce(a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM);
                }
                case "alltoall" -> {
                    if (msccl) {
                        return rt.alltoall(comm, a, ar, b, br, count, DataType.INT32).isPresent();
                    }
                    comm.alltoall(a, ar, b, br, count, DataType.INT32);
                }
                case "allgather" -> {
                    // In place: the rank's block already lies at rank · count of the output.
                    MemorySegment mine = b.asSlice(comm.rank() * count * 4, count * 4);
                    if (msccl) {
                        return rt.allgather(comm, mine, br, b, br, count, DataType.INT32).isPresent();
                    }
                    comm.allgather(mine, br, b.asSlice(0, count * 4 * n), br, count, DataType.INT32);
                }
                default -> throw new IllegalArgumentException("unknown collective " + c);
            }
            return false;
        }

        private long[] time(String c, boolean msccl, long count, MemorySegment a, MpRegistration ar,
                            MemorySegment b, MpRegistration br, int n) {
            fill(a, count * comm.size());
            long[] t = new long[n];
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                call(c, msccl, count, a, ar, b, br);
                t[i] = System.nanoTime() - t0;
            }
            return t;
        }

        private void check(String c, boolean msccl, long count, MemorySegment a, MpRegistration ar, MemorySegment b,
                           MpRegistration br) {
            int n = comm.size();
            int me = comm.rank();
            if (c.equals("allgather")) {
                fill(b.asSlice(me * count * 4), count);
            } else {
                fill(a, count * n);
            }
            call(c, msccl, count, a, ar, b, br);
            for (long i = 0; i < count * (c.equals("allreduce") ? 1 : n); i++) {
                int want = 0;
                int got;
                switch (c) {
                    case "allreduce" -> {
                        for (int r = 0; r < n; r++) {
                            want += in(r, i);
                        }
                        got = a.getAtIndex(ValueLayout.JAVA_INT, i);
                    }
                    case "alltoall" -> {
                        want = in((int) (i / count), me * count + i % count);
                        got = b.getAtIndex(ValueLayout.JAVA_INT, i);
                    }
                    default -> {
                        want = in((int) (i / count), i % count);
                        got = b.getAtIndex(ValueLayout.JAVA_INT, i);
                    }
                }
                if (want != got) {
                    throw new AssertionError((msccl ? "msccl " : "built-in ") + c + " of " + count + ": element " + i
                            + " is " + got + ", not " + want);
                }
            }
        }

        private static int in(int rank, long i) {
            return rank * 100_000 + (int) i * 3 + 1;
        }

        private void fill(MemorySegment m, long count) {
            for (long i = 0; i < count; i++) {
                m.setAtIndex(ValueLayout.JAVA_INT, i, in(comm.rank(), i));
            }
        }

        private static double median(double[] v) {
            double[] s = v.clone();
            Arrays.sort(s);
            return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        }

        /** @return p50 and p99 in microseconds */
        private static double[] percentiles(long[] ns) {
            long[] s = ns.clone();
            Arrays.sort(s);
            return new double[] {s[s.length / 2] / 1e3, s[Math.min(s.length - 1, (int) (s.length * 0.99))] / 1e3};
        }

        /** @return the largest over ranks of each figure */
        private double[] slowest(double[] mine, MemorySegment b, MpRegistration br) {
            MemorySegment w = b.asSlice(0, 8L * mine.length);
            for (int i = 0; i < mine.length; i++) {
                w.setAtIndex(ValueLayout.JAVA_DOUBLE, i, mine[i]);
            }
            comm.allreduce(w, br, w, br, mine.length, DataType.FLOAT64, ReduceOp.MAX);
            double[] out = new double[mine.length];
            for (int i = 0; i < mine.length; i++) {
                out[i] = w.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
            }
            return out;
        }

        /** Maps every rank's flag words here (the floor's): a line per (owner, writer). */
        private void mapFloor() {
            int n = comm.size();
            floorWords = mp.allocate(64L * n);
            MpRegistration reg = mp.register(floorWords);
            MemorySegment all = mp.allocate(16L * n);
            MpRegistration allReg = mp.register(all);
            MemorySegment mine = mp.allocate(16);
            MpRegistration mineReg = mp.register(mine);
            mine.set(ValueLayout.JAVA_LONG, 0, floorWords.address());
            mine.set(ValueLayout.JAVA_LONG, 8, reg.rkey());
            comm.allgather(mine, mineReg, all, allReg, 2, DataType.INT64);
            floorPeers = new MemorySegment[n];
            for (int p = 0; p < n; p++) {
                floorPeers[p] = p == comm.rank() ? floorWords : mp.peerMemory(comm.worldRank(p),
                        all.get(ValueLayout.JAVA_LONG, 16L * p), all.get(ValueLayout.JAVA_LONG, 16L * p + 8), 64L * n);
                if (floorPeers[p] == null) {
                    throw new IllegalStateException("the floor needs the ranks' memory mapped (one host)");
                }
            }
        }

        /**
         * The rounds of hand-offs one call of the selected program makes in a row at one tile, as (to, from) partner
         * sets per round: ring allgather n − 1 rounds and ring allreduce 2 (n − 1) to the next rank from the previous
         * one; recursive doubling/halving 2 log2 n rounds with the rank at distance n/2, …, 1, 1, …, n/2; all-pairs
         * alltoall one round with every other rank.
         */
        private int[][] rounds(String c) {
            int n = comm.size();
            int me = comm.rank();
            boolean rdh = c.equals("allreduce") && n > 2 && rt.programs().programs().stream()
                    .anyMatch(p -> p.name().contains("doubling"));
            List<int[]> r = new ArrayList<>();
            if (c.equals("alltoall")) {
                r.add(new int[] {-1});
            } else if (rdh) {
                for (int d = n / 2; d >= 1; d /= 2) {
                    r.add(new int[] {me ^ d});
                }
                for (int d = 1; d < n; d *= 2) {
                    r.add(new int[] {me ^ d});
                }
            } else {
                int k = c.equals("allgather") ? n - 1 : 2 * (n - 1);
                for (int j = 0; j < k; j++) {
                    r.add(new int[] {(me + 1) % n, (me + n - 1) % n});
                }
            }
            return r.toArray(new int[0][]);
        }

        /**
         * The floor of the program's algorithm: its rounds of hand-offs with no data and no interpreter. In a round a
         * rank stores the round's number into its line of each partner's words (release) and waits until each partner
         * stored it into its own (acquire), idling as the interpreter does.
         *
         * @return the nanoseconds of each iteration (one call's rounds) on this rank
         */
        private long[] floor(int[][] rounds, int n) {
            BackoffIdler idler = new BackoffIdler(BackoffPolicy.LOW_LATENCY);
            int me = comm.rank();
            int size = comm.size();
            long[] t = new long[n];
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                for (int[] round : rounds) {
                    long number = ++floorRound;
                    int to = round[0];
                    int from = round.length > 1 ? round[1] : round[0];
                    for (int p = 0; p < size; p++) {
                        if (p != me && (to < 0 || p == to)) {
                            LONG.setRelease(floorPeers[p], 64L * me, number);
                        }
                    }
                    for (int p = 0; p < size; p++) {
                        if (p != me && (from < 0 || p == from)) {
                            idler.reset();
                            while ((long) LONG.getAcquire(floorWords, 64L * p) < number) {
                                idler.idle();
                            }
                        }
                    }
                }
                t[i] = System.nanoTime() - t0;
            }
            return t;
        }
    }
}
