package dev.gdasync.apps.pingpong;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The message rate's CSV: the header {@value #HEADER}, then one row per mode and size: {@code msgs_per_s} from the
 * median run, {@code mbps} megabytes (10^6 bytes) per second, the slowest and fastest run's rates and their spread
 * relative to the median, and the median and 99th-percentile time of one window (empty where not timed).
 */
public final class RateCsv {
    /** The first line of the file. */
    public static final String HEADER = "mode,bytes,window,iters,msgs_per_s,mbps,run_min_msgs_per_s,run_max_msgs_per_s,"
            + "spread_pct,window_p50_us,window_p99_us";

    private RateCsv() {
    }

    /**
     * @param rows the results
     * @return the file's lines, header first
     */
    public static List<String> lines(List<RateResult> rows) {
        List<String> lines = new ArrayList<>(rows.size() + 1);
        lines.add(HEADER);
        for (RateResult r : rows) {
            lines.add(String.format(Locale.ROOT, "%s,%d,%d,%d,%.0f,%.2f,%.0f,%.0f,%.1f,%s,%s", r.mode(), r.bytes(), r.window(),
                    r.iters(), r.messagesPerSecond(), r.megabytesPerSecond(), r.runMin(), r.runMax(), r.spreadPercent(),
                    cell(r.windowP50Micros()), cell(r.windowP99Micros())));
        }
        return lines;
    }

    private static String cell(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v);
    }

    /**
     * Writes the CSV; its folder must exist.
     *
     * @param rows the results
     * @param file where
     */
    public static void write(List<RateResult> rows, Path file) {
        try {
            Files.write(file, lines(rows));
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the CSV " + file + ": " + e, e);
        }
    }
}
