package dev.gdasync.apps.pingpong;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The ping-pong's CSV: the header {@value #HEADER}, then one row per mode and size.
 * <ul>
 * <li>{@code mode}: host, sa, ki, mpj, mpj-niodev, jucx, or a C peer: floor, ompi, ucx (ucx's rows have the median
 *     ucx_perftest reports and no other percentile);</li>
 * <li>{@code bytes}: the message size;</li>
 * <li>{@code iters}: round trips per timed run;</li>
 * <li>{@code oneway_us}: one-way latency in microseconds, half the round-trip time, the median over the
 *     timed runs ({@code --reps});</li>
 * <li>{@code mbps}: megabytes (10^6 bytes) per second one way, {@code bytes / oneway_us};</li>
 * <li>{@code min_us}, {@code p50_us}, {@code p99_us}, {@code p99_9_us}, {@code max_us}: the distribution of every
 *     timed round trip, one-way (round trip / 2), from an HdrHistogram; empty where the mode does not time its
 *     round trips one by one;</li>
 * <li>{@code run_min_us}, {@code run_max_us}: the fastest and slowest timed run, one-way;</li>
 * <li>{@code spread_pct}: {@code (run_max_us - run_min_us) / oneway_us * 100}.</li>
 * </ul>
 * The columns after {@code mbps} came later: readers of the first five columns read the file as before.
 */
public final class Csv {
    /** The first line of the file. */
    public static final String HEADER = "mode,bytes,iters,oneway_us,mbps,min_us,p50_us,p99_us,p99_9_us,max_us,run_min_us,"
            + "run_max_us,spread_pct";

    private Csv() {
    }

    /**
     * @param rows the results
     * @return the file's lines, header first
     */
    public static List<String> lines(List<Result> rows) {
        List<String> lines = new ArrayList<>(rows.size() + 1);
        lines.add(HEADER);
        for (Result r : rows) {
            Latencies l = r.latencies();
            RunSpread s = r.runs();
            lines.add(String.format(Locale.ROOT, "%s,%d,%d,%.4f,%.2f", r.mode(), r.bytes(), r.iters(), r.oneWayMicros(),
                    r.megabytesPerSecond()) + "," + String.join(",", cell(l.min()), cell(l.p50()), cell(l.p99()),
                    cell(l.p999()), cell(l.max()), cell(s.min()), cell(s.max()),
                    Double.isNaN(s.percent()) ? "" : String.format(Locale.ROOT, "%.1f", s.percent())));
        }
        return lines;
    }

    private static String cell(double micros) {
        return Double.isNaN(micros) ? "" : String.format(Locale.ROOT, "%.4f", micros);
    }

    /**
     * Writes the CSV. Its folder must exist (the command line checked it): no folder is made.
     *
     * @param rows the results
     * @param file where
     */
    public static void write(List<Result> rows, Path file) {
        try {
            Files.write(file, lines(rows));
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the CSV " + file + ": " + e, e);
        }
    }
}
