package dev.gdasync.apps.pingpong;

import dev.gdasync.libmp.cli.ProgressLine;
import dev.gdasync.libmp.cli.SizeCosts;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * Progress lines of a side-by-side measurement ({@link Measurement}) on rank 0, at most one every few seconds:
 * the mode and size running, the run among the size's runs, and an estimate of the time left.
 *
 * <p>The estimate adds the warm-ups still to come (they last a known time) to the timed runs still to come, each
 * costing {@code iters} times the time of one round trip at its size ({@link SizeCosts}, which learns from every
 * run, warm-ups included).
 */
final class MeasurementProgress {
    /** The system property giving the seconds between two lines (default {@value #DEFAULT_SECONDS}). */
    static final String INTERVAL_PROPERTY = "gdasync.progress.seconds";
    static final double DEFAULT_SECONDS = 5;

    private final PingPongOptions options;
    private final List<String> modes;
    private final ProgressLine line;
    /** Where notes go (rank 0), or null. */
    private final PrintStream out;
    private final SizeCosts costs = new SizeCosts();

    private MeasurementProgress(PingPongOptions options, List<String> modes, PrintStream out, ProgressLine line) {
        this.options = options;
        this.modes = List.copyOf(modes);
        this.out = out;
        this.line = line;
    }

    /** @return progress for rank 0: lines on standard error, notes on standard output beside the results */
    static MeasurementProgress toStandardError(PingPongOptions options, List<String> modes) {
        return new MeasurementProgress(options, modes, System.out, new ProgressLine(System.err, (long) (interval() * 1e9)));
    }

    /** @return progress that prints nothing (rank 1) */
    static MeasurementProgress silent(PingPongOptions options) {
        return new MeasurementProgress(options, List.of(), null, null);
    }

    static MeasurementProgress to(PrintStream out, PingPongOptions options, List<String> modes, double intervalSeconds) {
        return new MeasurementProgress(options, modes, out, new ProgressLine(out, (long) (intervalSeconds * 1e9)));
    }

    private static double interval() {
        String v = System.getProperty(INTERVAL_PROPERTY);
        try {
            return v == null ? DEFAULT_SECONDS : Math.max(0, Double.parseDouble(v));
        } catch (NumberFormatException e) {
            return DEFAULT_SECONDS;
        }
    }

    /** A run of {@code iters} round trips of {@code bytes} took {@code nanos}. */
    void ran(int bytes, int iters, long nanos) {
        costs.ran(bytes, iters, nanos);
    }

    /** Prints a note at once, a line that qualifies the results (rank 0; rank 1's progress prints nothing). */
    void note(String text) {
        if (out != null) {
            out.println(text);
        }
    }

    /** Mode {@code k} is about to warm up at size {@code sizeIndex} ({@code first}: the mode's first warm-up). */
    void warming(int k, int sizeIndex, boolean first) {
        if (line != null) {
            line.offer(() -> String.format(Locale.ROOT, "warming up %s, %d B (size %d of %d); %s", modes.get(k),
                    options.sizes().get(sizeIndex), sizeIndex + 1, options.sizes().size(),
                    SizeCosts.left(secondsLeft(sizeIndex, first ? -1 - k : k, 0))));
        }
    }

    /** Timed run {@code rep} of mode {@code k} at size {@code sizeIndex} is about to start. */
    void timing(int k, int sizeIndex, int rep) {
        if (line != null) {
            line.offer(() -> String.format(Locale.ROOT, "%s %d B, run %d of %d (size %d of %d); %s", modes.get(k),
                    options.sizes().get(sizeIndex), rep + 1, options.reps(), sizeIndex + 1, options.sizes().size(),
                    SizeCosts.left(secondsLeft(sizeIndex, modes.size(), rep * modes.size() + k))));
        }
    }

    /**
     * @param sizeIndex  the size running
     * @param warmsDone  how many modes finished this size's warm-up (all when timing); negative -1 - k while mode k
     *                   is in its first warm-up
     * @param runsDone   timed runs of this size done, over all modes
     * @return the seconds left, or NaN before anything was measured
     */
    double secondsLeft(int sizeIndex, int warmsDone, int runsDone) {
        int n = modes.size();
        double left = 0;
        if (warmsDone < 0) {
            int k = -1 - warmsDone;
            left += (n - k) * warmSeconds(0, options.firstWarmupNanos()); // first warm-ups to come
            warmsDone = 0;
        }
        left += (n - warmsDone) * warmSeconds(sizeIndex, options.sizeWarmupNanos());
        left += runSeconds(sizeIndex, n * options.reps() - runsDone);
        for (int j = sizeIndex + 1; j < options.sizes().size(); j++) {
            left += n * warmSeconds(j, options.sizeWarmupNanos()) + runSeconds(j, n * options.reps());
        }
        return left;
    }

    /** A warm-up lasts its time, but at least one chunk of round trips once it runs at all. */
    private double warmSeconds(int sizeIndex, long nanos) {
        if (nanos <= 0) {
            return 0;
        }
        double chunk = Math.min(options.iters(), Measurement.WARMUP_CHUNK) * nanosPerRoundTrip(options.sizes().get(sizeIndex));
        return Math.max(nanos, Double.isNaN(chunk) ? 0 : chunk) / 1e9;
    }

    private double runSeconds(int sizeIndex, int runs) {
        return runs * options.iters() * nanosPerRoundTrip(options.sizes().get(sizeIndex)) / 1e9;
    }

    /** @return the estimated time of one round trip of {@code bytes}, or NaN before any run */
    double nanosPerRoundTrip(int bytes) {
        return costs.nanosPerRoundTrip(bytes);
    }
}
