package dev.gdasync.apps.hpgmg;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Upstream's bench_hpgmg for every mode side by side: per problem size (h, 2h, 4h), each mode's warm-up
 * solves, then the timed solves in turn (solve r of every mode before solve r + 1 of any), each printed as
 * upstream prints it, then each mode's timing breakdown. Returns one summary row per mode and size.
 */
final class Bench {
    private Bench() {
    }

    /** @return rows "mode h dof seconds_per_solve norm rel" */
    static List<String> run(List<Hpgmg.Run> runs, HpgmgCommand o, PrintStream out) {
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
                    out.printf(Locale.ROOT, pass == 0
                            ? "%n%n===== Warming up by running %d solves ==========================================%n"
                            : "%n%n===== Running %d solves ========================================================%n", o.solves);
                }
                for (Hpgmg.Run r : runs) {
                    r.mg().resetTimers();
                }
                for (int s = 0; s < o.solves; s++) {
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
