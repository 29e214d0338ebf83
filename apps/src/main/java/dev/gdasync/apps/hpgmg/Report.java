package dev.gdasync.apps.hpgmg;

import java.io.PrintStream;
import java.util.List;
import java.util.function.ToDoubleFunction;

/** Upstream's "Timing Breakdown" table (MGPrintTiming), for one mode's hierarchy from one level on. */
final class Report {
    private Report() {
    }

    static void timing(PrintStream out, MultiGrid mg, int from) {
        List<Level> ls = mg.levels;
        double scale = 1.0 / Math.max(1, mg.solvesPerformed);
        StringBuilder s = new StringBuilder("\n\n");
        s.append("level                     ");
        for (int l = from; l < ls.size(); l++) s.append(String.format("%12d ", l - from));
        s.append("\nlevel dimension           ");
        for (int l = from; l < ls.size(); l++) s.append(String.format("%10d^3 ", ls.get(l).dim));
        s.append("\nbox dimension             ");
        for (int l = from; l < ls.size(); l++) s.append(String.format("%10d^3 ", ls.get(l).boxDim));
        s.append("       total\n");
        s.append(rule(ls.size() - from));
        row(s, "smooth                    ", ls, from, scale, t -> t.smooth);
        row(s, "residual                  ", ls, from, scale, t -> t.residual);
        row(s, "applyOp                   ", ls, from, scale, t -> t.applyOp);
        row(s, "BLAS1                     ", ls, from, scale, t -> t.blas1);
        row(s, "BLAS3                     ", ls, from, scale, t -> t.blas3);
        row(s, "Boundary Conditions       ", ls, from, scale, t -> t.boundaryConditions);
        row(s, "Restriction               ", ls, from, scale, t -> t.restrictionTotal);
        row(s, "Interpolation             ", ls, from, scale, t -> t.interpolationTotal);
        row(s, "Ghost Zone Exchange       ", ls, from, scale, t -> t.ghostZoneTotal);
        row(s, "collectives               ", ls, from, scale, t -> t.collectives);
        s.append(rule(ls.size() - from));
        row(s, "Total by level            ", ls, from, scale, t -> t.total);
        s.append('\n');
        s.append(String.format("   Total time in MGBuild  %12.6f seconds%n", mg.buildTime));
        s.append(String.format("   Total time in MGSolve  %12.6f seconds%n", scale * mg.solveTime));
        s.append(String.format("      number of v-cycles  %12d%n", ls.get(from).vcycles / Math.max(1, mg.solvesPerformed)));
        s.append(String.format("Bottom solver iterations  %12d%n", ls.getLast().krylovIterations / Math.max(1, mg.solvesPerformed)));
        s.append("\n\n");
        out.print(s);
    }

    private static String rule(int n) {
        return "------------------        " + "------------ ".repeat(n + 1) + "\n";
    }

    private static void row(StringBuilder s, String name, List<Level> ls, int from, double scale,
                            ToDoubleFunction<LevelTimers> f) {
        double total = 0;
        s.append(name);
        for (int l = from; l < ls.size(); l++) {
            double t = scale * f.applyAsDouble(ls.get(l).timers);
            total += t;
            s.append(String.format("%12.6f ", t));
        }
        s.append(String.format("%12.6f%n", total));
    }
}
