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
 * <li>{@code mode}: host, sa, ki, mpj or jucx;</li>
 * <li>{@code bytes}: the message size;</li>
 * <li>{@code iters}: round trips per timed run;</li>
 * <li>{@code oneway_us}: one-way latency in microseconds, half the round-trip time, the median over the
 *     timed runs ({@code --reps});</li>
 * <li>{@code mbps}: megabytes (10^6 bytes) per second one way, {@code bytes / oneway_us}.</li>
 * </ul>
 */
public final class Csv {
    /** The first line of the file. */
    public static final String HEADER = "mode,bytes,iters,oneway_us,mbps";

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
            lines.add(String.format(Locale.ROOT, "%s,%d,%d,%.4f,%.2f", r.mode(), r.bytes(), r.iters(), r.oneWayMicros(),
                    r.megabytesPerSecond()));
        }
        return lines;
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
