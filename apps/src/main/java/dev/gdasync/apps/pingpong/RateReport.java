package dev.gdasync.apps.pingpong;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** The message rate's table and its target (DESIGN.md §7): 8 B over shared memory at least twice raw JUCX's rate. */
final class RateReport {
    /** The 8 B rate of host and sa, as a multiple of raw JUCX's measured in the same run. */
    static final double TARGET_OVER_JUCX = 2.0;

    private RateReport() {
    }

    /** @return the line printed as soon as a row is measured */
    static String progressLine(RateResult r) {
        return String.format(Locale.ROOT, "%-5s %9d B  window %d  %12.0f msgs/s  %11.1f MB/s", r.mode(), r.bytes(),
                r.window(), r.messagesPerSecond(), r.megabytesPerSecond());
    }

    /**
     * Prints the table and the target lines.
     *
     * @param rows    the rows
     * @param o       the options
     * @param machine the machine's line
     * @param load    what else ran meanwhile
     * @param out     where
     */
    static void print(List<RateResult> rows, RateOptions o, String machine, LoadSeen load, PrintStream out) {
        out.println();
        out.println("msgrate, 2 ranks: window of " + o.window() + " non-blocking sends, then one acknowledgement"
                + " (msgs/s = window x " + o.iters() + " windows / run time, median of " + o.reps() + " runs)");
        out.println(machine);
        out.println(load.describe());
        table(rows, out);
        out.println();
        for (String line : targets(rows, load)) {
            out.println(line);
        }
    }

    static void table(List<RateResult> rows, PrintStream out) {
        out.printf(Locale.ROOT, "%-5s %9s %6s %13s %10s | %13s %13s %6s | %10s %10s%n", "mode", "bytes", "window",
                "msgs/s", "MB/s", "run_min", "run_max", "spread", "window_p50", "window_p99");
        for (RateResult r : rows) {
            out.printf(Locale.ROOT, "%-5s %9d %6d %13.0f %10.1f | %13.0f %13.0f %5.0f%% | %10s %10s%n", r.mode(), r.bytes(),
                    r.window(), r.messagesPerSecond(), r.megabytesPerSecond(), r.runMin(), r.runMax(), r.spreadPercent(),
                    Report.micros(r.windowP50Micros()), Report.micros(r.windowP99Micros()));
        }
    }

    /**
     * @param rows the rows
     * @param load what else ran meanwhile
     * @return the 8 B target lines: host and sa against raw JUCX's rate of the same run
     */
    static List<String> targets(List<RateResult> rows, LoadSeen load) {
        Optional<RateResult> jucx = rows.stream().filter(r -> r.mode().equals("jucx") && r.bytes() == 8).findFirst();
        List<String> lines = new java.util.ArrayList<>();
        for (RateResult r : rows) {
            if (r.bytes() != 8 || !(r.mode().equals("host") || r.mode().equals("sa"))) {
                continue;
            }
            if (jucx.isEmpty()) {
                lines.add(String.format(Locale.ROOT, "8 B message rate, %s: %.0f msgs/s (target >= %.0f x raw JUCX: add --mode"
                        + " jucx to judge it)", r.mode(), r.messagesPerSecond(), TARGET_OVER_JUCX));
                continue;
            }
            RateResult j = jucx.get();
            double ratio = r.messagesPerSecond() / j.messagesPerSecond();
            String verdict;
            if (ratio >= TARGET_OVER_JUCX) {
                verdict = "met";
            } else {
                double spread = Math.max(r.spreadPercent(), j.spreadPercent());
                List<String> noise = load.noise(spread, String.format(Locale.ROOT, "the runs spread %.0f %% (%s %.0f %%, jucx %.0f %%)",
                        spread, r.mode(), r.spreadPercent(), j.spreadPercent()));
                verdict = noise.isEmpty() ? "NOT met" : "not judged, the run was too noisy: " + String.join("; ", noise);
            }
            lines.add(String.format(Locale.ROOT, "8 B message rate, %s: %.0f msgs/s = %.2f x raw JUCX (%.0f msgs/s), target"
                    + " >= %.1f x: %s", r.mode(), r.messagesPerSecond(), ratio, j.messagesPerSecond(), TARGET_OVER_JUCX, verdict));
        }
        return lines;
    }
}
