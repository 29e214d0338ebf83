package dev.gdasync.apps.collectives;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The targets of issue 30, judged on one run's medians, side by side: on 2 ranks every gdasync method at most
 * {@value #TWO_RANKS}x Open MPI's median and below MPJ Express's at every size of every collective; on 4 ranks at most
 * {@value #FOUR_RANKS}x Open MPI's and below MPJ Express's. Each gdasync method of each collective is judged on the
 * sizes it ran; a target without its baseline in the run is not judged.
 */
final class BenchTargets {
    /** The 2-rank target, as a multiple of Open MPI's median. */
    static final double TWO_RANKS = 2.0;
    /** The 4-rank target, as a multiple of Open MPI's median. */
    static final double FOUR_RANKS = 3.0;

    private BenchTargets() {
    }

    /** @return the limit for this many ranks, or empty where the issue sets none */
    static Optional<Double> limit(int ranks) {
        return ranks == 2 ? Optional.of(TWO_RANKS) : ranks == 4 ? Optional.of(FOUR_RANKS) : Optional.empty();
    }

    /** @return whether a method is a baseline rather than gdasync's */
    static boolean baseline(String method) {
        return method.equals("ompi") || method.equals("mpj");
    }

    /**
     * @param rows   every row of the run
     * @param row    a row
     * @param method the reference method
     * @return the row's median over the reference's at the same collective and size, if the reference ran it
     */
    static Optional<Double> ratio(List<BenchRow> rows, BenchRow row, String method) {
        return rows.stream().filter(r -> r.method().equals(method) && r.collective().equals(row.collective())
                        && r.bytes() == row.bytes()).findFirst()
                .map(r -> row.medianMicros() / r.medianMicros());
    }

    /**
     * Prints one line per gdasync method of each collective with both verdicts, then how many met both.
     *
     * @param rows the run's rows
     * @param out  where
     */
    static void print(List<BenchRow> rows, PrintStream out) {
        if (rows.isEmpty()) {
            return;
        }
        int ranks = rows.getFirst().ranks();
        Optional<Double> limit = limit(ranks);
        if (limit.isEmpty()) {
            out.println("collectives: issue 30 sets targets for 2 and 4 ranks, not " + ranks);
            return;
        }
        boolean ompi = rows.stream().anyMatch(r -> r.method().equals("ompi"));
        boolean mpj = rows.stream().anyMatch(r -> r.method().equals("mpj"));
        out.printf(Locale.ROOT, "collectives: targets (issue 30), %d ranks: <= %.0fx Open MPI's median at every size%s;"
                + " below MPJ Express's at every size%s%n", ranks, limit.get(), ompi ? "" : " (not judged: no ompi rows)",
                mpj ? "" : " (not judged: no mpj rows)");
        Map<String, List<BenchRow>> byMethod = new LinkedHashMap<>();
        for (BenchRow r : rows) {
            if (!baseline(r.method())) {
                byMethod.computeIfAbsent(r.collective() + " " + r.method(), k -> new ArrayList<>()).add(r);
            }
        }
        int met = 0;
        for (List<BenchRow> m : byMethod.values()) {
            Verdict vsOmpi = judge(rows, m, "ompi", limit.get());
            Verdict vsMpj = judge(rows, m, "mpj", 1.0);
            met += vsOmpi.met() && vsMpj.met() ? 1 : 0;
            out.printf(Locale.ROOT, "collectives:   %-10s %-12s <= %.0fx ompi: %-50s below mpj: %s%n",
                    m.getFirst().collective(), m.getFirst().method(), limit.get(), vsOmpi.text(), vsMpj.text());
        }
        out.printf(Locale.ROOT, "collectives: targets met (both) by %d of %d gdasync methods' collectives%n", met,
                byMethod.size());
    }

    /** A verdict: whether it was met, in words. */
    private record Verdict(boolean met, String text) {
    }

    /**
     * @param rows   every row
     * @param method one method's rows of one collective
     * @param ref    the reference method
     * @param limit  the largest ratio that meets the target (below it for mpj: a ratio under 1)
     */
    private static Verdict judge(List<BenchRow> rows, List<BenchRow> method, String ref, double limit) {
        int judged = 0;
        int missed = 0;
        double worst = 0;
        long worstBytes = 0;
        for (BenchRow r : method) {
            Optional<Double> x = ratio(rows, r, ref);
            if (x.isEmpty()) {
                continue;
            }
            judged++;
            boolean miss = ref.equals("mpj") ? x.get() >= limit : x.get() > limit;
            missed += miss ? 1 : 0;
            if (x.get() > worst) {
                worst = x.get();
                worstBytes = r.bytes();
            }
        }
        if (judged == 0) {
            return new Verdict(false, "not judged");
        }
        String at = method.getFirst().collective().equals("barrier") ? "" : " at " + BenchReport.size(worstBytes);
        return missed == 0
                ? new Verdict(true, String.format(Locale.ROOT, "met (%d of %d sizes; worst %sx %s%s)", judged, judged,
                        BenchReport.ratio(worst), ref, at))
                : new Verdict(false, String.format(Locale.ROOT, "MISSED at %d of %d sizes (worst %sx %s%s)", missed,
                        judged, BenchReport.ratio(worst), ref, at));
    }
}
