package dev.gdasync.apps.pingpong;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.ToDoubleFunction;

/**
 * Every mode against the C peers measured in the same run: the ratio of its one-way latency to the floor's and to
 * Open MPI's at the same size, by three measures: the fastest of the timed runs ("best of N", the figure least
 * touched by other tenants of a shared machine), the median of every timed round trip (p50), and the median run.
 * Then the targets against Open MPI (issue 23): {@code host} 8 B at most {@value #HOST_VS_OMPI}x, {@code sa} at most
 * {@value #SA_VS_OMPI}x, judged on the best run.
 */
final class Ratios {
    /** {@code host}'s 8 B one-way target, as a multiple of Open MPI's. */
    static final double HOST_VS_OMPI = 1.0;
    /** {@code sa}'s 8 B one-way target, as a multiple of Open MPI's. */
    static final double SA_VS_OMPI = 3.0;

    private Ratios() {
    }

    /** One measure of a row. */
    private record Measure(String name, ToDoubleFunction<Result> of) {
    }

    private static final List<Measure> MEASURES = List.of(
            new Measure("best run", r -> r.runs().min()),
            new Measure("p50", r -> r.latencies().p50()),
            new Measure("median run", Result::oneWayMicros));

    /**
     * Prints the ratios when a floor or Open MPI row is there; nothing otherwise.
     *
     * @param rows the measured rows
     * @param out  where
     */
    static void print(List<Result> rows, PrintStream out) {
        boolean floor = rows.stream().anyMatch(r -> r.mode().equals("floor"));
        boolean ompi = rows.stream().anyMatch(r -> r.mode().equals("ompi"));
        if (!floor && !ompi) {
            return;
        }
        out.println();
        out.println("against the C peers of this run (one-way us, and x the floor / x Open MPI at the same size):");
        int width = Math.max(5, rows.stream().mapToInt(r -> r.mode().length()).max().orElse(5));
        StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%-" + width + "s %8s", "mode", "bytes"));
        for (Measure m : MEASURES) {
            head.append(String.format(Locale.ROOT, " | %-10s %8s %8s", m.name(), "x floor", "x ompi"));
        }
        out.println(head);
        for (Result r : rows) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-" + width + "s %8d", r.mode(), r.bytes()));
            for (Measure m : MEASURES) {
                double v = m.of().applyAsDouble(r);
                line.append(String.format(Locale.ROOT, " | %-10s %8s %8s", Report.micros(v),
                        ratio(v, find(rows, "floor", r.bytes()), m), ratio(v, find(rows, "ompi", r.bytes()), m)));
            }
            out.println(line);
        }
        for (Result r : rows) {
            if (r.bytes() == 8 && (r.mode().equals("host") || r.mode().equals("sa"))) {
                target(out, r, find(rows, "ompi", 8), r.mode().equals("host") ? HOST_VS_OMPI : SA_VS_OMPI);
            }
        }
    }

    /**
     * @return the ratio of {@code v} to the reference row's same measure, as text ("-" where either is unknown)
     */
    private static String ratio(double v, Optional<Result> reference, Measure m) {
        if (reference.isEmpty()) {
            return "-";
        }
        double ref = m.of().applyAsDouble(reference.get());
        return Double.isNaN(v) || Double.isNaN(ref) || ref <= 0 ? "-" : String.format(Locale.ROOT, "%.2f", v / ref);
    }

    /** @return the row of a mode at a size, if measured */
    static Optional<Result> find(List<Result> rows, String mode, int bytes) {
        return rows.stream().filter(r -> r.mode().equals(mode) && r.bytes() == bytes).findFirst();
    }

    private static void target(PrintStream out, Result r, Optional<Result> ompi, double limit) {
        if (ompi.isEmpty()) {
            return;
        }
        double best = r.runs().min() / ompi.get().runs().min();
        double p50 = r.latencies().p50() / ompi.get().latencies().p50();
        out.printf(Locale.ROOT, "8 B one-way, %s against Open MPI side by side: best run %.2fx, p50 %.2fx; target <= %.1fx: %s%n",
                r.mode(), best, p50, limit, best <= limit ? "met" : "NOT met (docs/bench/c-peers.md says what is left)");
    }
}
