package dev.gdasync.apps.hpgmg;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Upstream's bench_hpgmg for every mode side by side: per problem size (h, 2h, 4h), each mode's warm-up
 * solves, then the timed solves in turn (solve r of every mode before solve r + 1 of any), each printed as
 * upstream prints it, then each mode's timing breakdown. Returns one summary row per mode and size.
 *
 * <p>The warm-up runs at least {@code --solves} rounds and goes on while rank 0 sees the JIT still at work
 * ({@link Warmup}): a JVM compiles the solver and the transport's calls for seconds (on a 2-CPU machine a 32^3
 * solve in {@code host} mode takes 3-10 times its settled time for its first ~150 solves, for ~12 s on 4
 * ranks), and a count of solves that is enough for one mode is not for another. Rank 0 decides after each
 * round and every rank follows its decision, since every solve is collective.
 */
final class Bench {
    /** Rank 0's decision, as every rank of the mode's job learns it (a broadcast from rank 0). */
    interface RootDecides {
        /**
         * @param mine this rank's value; only rank 0's counts
         * @return rank 0's value
         */
        boolean fromRoot(boolean mine);
    }

    private Bench() {
    }

    /**
     * When rank 0's warm-up ends: not before {@code seconds}, then once a block of {@value #BLOCK} rounds was
     * no more than 10 % faster than the block before it (the JIT has settled), and at the latest after four
     * times {@code seconds}. Four ranks on two CPUs need about twice as long as two ranks to settle.
     */
    static final class Warmup {
        static final int BLOCK = 25;
        final long start;
        private final long minimum;
        private final long maximum;
        /** When the current block of rounds began; set at the first {@link #goOn}. */
        private long blockStart;
        private int rounds;
        private long previousBlock = Long.MAX_VALUE;

        Warmup(double seconds, long now) {
            this.start = now;
            this.minimum = (long) (seconds * 1e9);
            this.maximum = 4 * minimum;
        }

        /** Called after each round past the first {@code --solves}: whether to run another. */
        boolean goOn(long now) {
            if (rounds++ == 0) {
                blockStart = now; // blocks of BLOCK rounds each, the first one after the fixed warm-up solves
            } else if (rounds % BLOCK == 1) {
                long block = now - blockStart;
                boolean settled = block > previousBlock * 0.9;
                previousBlock = block;
                blockStart = now;
                if (now - start >= minimum && settled) {
                    return false;
                }
            }
            return now - start < maximum;
        }
    }

    /** @return rows "mode h dof seconds_per_solve norm rel" */
    static List<String> run(List<Hpgmg.Run> runs, HpgmgCommand o, PrintStream out, RootDecides root) {
        List<String> rows = new ArrayList<>();
        boolean tag = runs.size() > 1;
        for (int l = 0; l < o.levels; l++) {
            for (Hpgmg.Run r : runs) {
                MultiGrid mg = r.mg();
                if (l > 0) {
                    mg.restriction(mg.levels.get(l), Level.VECTOR_F, mg.levels.get(l - 1), Level.VECTOR_F, Restriction.CELL);
                    mg.t.sync();
                }
            }
            for (int pass = 0; pass < 2; pass++) {
                if (out != null && !o.quiet) {
                    if (pass == 0 && o.warmupSeconds > 0) {
                        out.printf(Locale.ROOT, "%n%n===== Warming up by running at least %d solves for %s s ==========================%n",
                                o.solves, Double.toString(o.warmupSeconds));
                    } else {
                        out.printf(Locale.ROOT, pass == 0
                                ? "%n%n===== Warming up by running %d solves ==========================================%n"
                                : "%n%n===== Running %d solves ========================================================%n", o.solves);
                    }
                }
                for (Hpgmg.Run r : runs) {
                    r.mg().resetTimers();
                }
                Warmup warmup = new Warmup(o.warmupSeconds, System.nanoTime());
                int s = 0;
                for (; s < o.solves || (pass == 0 && o.warmupSeconds > 0
                        && root.fromRoot(warmup.goOn(System.nanoTime()))); s++) {
                    for (Hpgmg.Run r : runs) {
                        MultiGrid mg = r.mg();
                        Level top = mg.levels.get(l);
                        double start = LevelTimers.now();
                        mg.t.compute(() -> mg.ops.zero(top, Level.VECTOR_U));
                        double[] norm = mg.fmgSolve(l, Level.VECTOR_U, Level.VECTOR_F);
                        double took = LevelTimers.now() - start;
                        if (out != null && !o.quiet && top.active) {
                            out.printf(Locale.ROOT, "%sFMGSolve... f-cycle     norm=%1.15e  rel=%1.15e  done (%f seconds)%n",
                                    tag ? "[" + r.mode() + "] " : "", norm[0], norm[1], took);
                        }
                        if (pass == 1 && s == o.solves - 1) {
                            r.results().add(norm);
                        }
                    }
                }
                if (pass == 0 && out != null && !o.quiet) {
                    out.printf(Locale.ROOT, "warmed up: %d solves per mode in %.1f s%n", s,
                            (System.nanoTime() - warmup.start) / 1e9);
                }
            }
            for (Hpgmg.Run r : runs) {
                MultiGrid mg = r.mg();
                Level top = mg.levels.get(l);
                double perSolve = mg.solveTime / Math.max(1, mg.solvesPerformed);
                double[] norm = r.results().getLast();
                rows.add(String.format(Locale.ROOT, "%s %s %s %s %s %s", r.mode(), Double.toString(top.h),
                        Double.toString((double) top.dim * top.dim * top.dim), Double.toString(perSolve),
                        Double.toString(norm[0]), Double.toString(norm[1])));
                if (out != null && !o.quiet) {
                    out.println();
                    out.println();
                    out.println("===== Timing Breakdown " + (tag ? "(" + r.mode() + ") " : "") + "=========================================================");
                    Report.timing(out, mg, l);
                }
            }
        }
        return rows;
    }
}
