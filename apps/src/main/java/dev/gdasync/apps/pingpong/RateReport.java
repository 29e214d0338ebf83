package dev.gdasync.apps.pingpong;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The message rate's table and its targets (DESIGN.md §7, issue 30): 8 B over shared memory at least twice raw JUCX's
 * rate, at least half UCX in C's ({@code ucx_perftest -t tag_bw}) where the ucx mode ran, and a window's 99th
 * percentile time within a few times its median.
 */
final class RateReport {
    /** The 8 B rate of host and sa, as a multiple of raw JUCX's measured in the same run. */
    static final double TARGET_OVER_JUCX = 2.0;
    /** The 8 B rate of host and sa, as a multiple of UCX in C's {@code tag_bw} measured in the same run. */
    static final double TARGET_OVER_UCX = 0.5;
    /** A window's 99th percentile time, as a multiple of its median ("within a few times"). */
    static final double TARGET_TAIL = 4.0;

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
     * @return the 8 B target lines: host and sa against raw JUCX's rate of the same run, and against UCX in C's
     *         ({@code ucx_perftest -t tag_bw}) where the ucx mode ran
     */
    static List<String> targets(List<RateResult> rows, LoadSeen load) {
        Optional<RateResult> jucx = eightBytes(rows, "jucx");
        Optional<RateResult> ucx = eightBytes(rows, "ucx");
        List<String> lines = new java.util.ArrayList<>();
        for (RateResult r : rows) {
            if (r.bytes() != 8 || !(r.mode().equals("host") || r.mode().equals("sa"))) {
                continue;
            }
            if (jucx.isEmpty()) {
                lines.add(String.format(Locale.ROOT, "8 B message rate, %s: %.0f msgs/s (target >= %.0f x raw JUCX: add --mode"
                        + " jucx to judge it)", r.mode(), r.messagesPerSecond(), TARGET_OVER_JUCX));
            } else {
                lines.add(judged(r, jucx.get(), "raw JUCX", TARGET_OVER_JUCX, load));
            }
            ucx.ifPresent(u -> lines.add(judged(r, u, "UCX in C's tag_bw", TARGET_OVER_UCX, load)));
            if (!Double.isNaN(r.windowP50Micros()) && r.windowP50Micros() > 0) {
                lines.add(tail(r, load));
            }
        }
        return lines;
    }

    /** The window's tail line: its 99th percentile as a multiple of its median, at most {@link #TARGET_TAIL}. */
    private static String tail(RateResult r, LoadSeen load) {
        double ratio = r.windowP99Micros() / r.windowP50Micros();
        String verdict;
        if (ratio <= TARGET_TAIL) {
            verdict = "met";
        } else {
            List<String> noise = load.noise(r.spreadPercent(), String.format(Locale.ROOT, "the runs spread %.0f %%",
                    r.spreadPercent()));
            verdict = noise.isEmpty() ? "NOT met" : "not judged, the run was too noisy: " + String.join("; ", noise);
        }
        return String.format(Locale.ROOT, "8 B window tail, %s: p99 %.1f us = %.1f x the p50 (%.1f us), target <= %.0f x: %s",
                r.mode(), r.windowP99Micros(), ratio, r.windowP50Micros(), TARGET_TAIL, verdict);
    }

    private static Optional<RateResult> eightBytes(List<RateResult> rows, String mode) {
        return rows.stream().filter(r -> r.mode().equals(mode) && r.bytes() == 8).findFirst();
    }

    /** One target line: a mode's rate as a multiple of a reference's, met, not met, or not judged on a noisy run. */
    private static String judged(RateResult r, RateResult ref, String refName, double target, LoadSeen load) {
        double ratio = r.messagesPerSecond() / ref.messagesPerSecond();
        String verdict;
        if (ratio >= target) {
            verdict = "met";
        } else {
            double spread = Math.max(r.spreadPercent(), ref.spreadPercent());
            List<String> noise = load.noise(spread, String.format(Locale.ROOT, "the runs spread %.0f %% (%s %.0f %%, %s %.0f %%)",
                    spread, r.mode(), r.spreadPercent(), ref.mode(), ref.spreadPercent()));
            verdict = noise.isEmpty() ? "NOT met" : "not judged, the run was too noisy: " + String.join("; ", noise);
        }
        return String.format(Locale.ROOT, "8 B message rate, %s: %.0f msgs/s = %.2f x %s (%.0f msgs/s), target"
                + " >= %.1f x: %s", r.mode(), r.messagesPerSecond(), ratio, refName, ref.messagesPerSecond(), target, verdict);
    }
}
