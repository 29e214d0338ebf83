package dev.gdasync.libmp.cli;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * A progress line for a long run, printed whole (so it survives {@code mprun}'s per-rank line prefixes and log
 * files) and at most once per interval: {@code progress: sa 4096 B, run 3 of 5, size 2 of 3; about 1 min 10 s left}.
 */
public final class ProgressLine {
    private final PrintStream out;
    private final long intervalNanos;
    private long last;
    private boolean printed;

    /**
     * @param out           where the lines go (standard error: standard output keeps the results)
     * @param intervalNanos the least time between two lines
     */
    public ProgressLine(PrintStream out, long intervalNanos) {
        this.out = out;
        this.intervalNanos = intervalNanos;
        this.last = System.nanoTime();
    }

    /**
     * Prints the line if the interval has passed since the last one (or since this object was made).
     *
     * @param text makes the line, called only when it is printed
     * @return whether a line was printed
     */
    public boolean offer(Supplier<String> text) {
        long now = System.nanoTime();
        if (now - last < intervalNanos) {
            return false;
        }
        last = now;
        printed = true;
        out.println("progress: " + text.get());
        out.flush();
        return true;
    }

    /** @return whether any line was printed */
    public boolean printedAny() {
        return printed;
    }

    /**
     * @param seconds a duration, not negative
     * @return it in words a person reads at a glance: {@code 45 s}, {@code 3 min 20 s}, {@code 1 h 5 min}
     */
    public static String duration(double seconds) {
        long s = Math.max(0, Math.round(seconds));
        if (s < 60) {
            return s + " s";
        }
        if (s < 3600) {
            return String.format(Locale.ROOT, "%d min %d s", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%d h %d min", s / 3600, (s % 3600) / 60);
    }
}
