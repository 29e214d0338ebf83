package dev.gdasync.apps.pingpong;

import org.HdrHistogram.Histogram;

/**
 * Every round trip of a mode at one size, recorded in an HdrHistogram (nanoseconds): the initiator marks the end
 * of each round trip with {@link #lap()}, which records the time since the previous mark.
 *
 * <p>One thread records at a time: the initiator's CPU thread in {@code host} and {@code jucx}, its stream's
 * thread in {@code sa} (a host task per iteration, {@link #lapTask()}); in {@code ki} the host KI executor's kernel
 * thread stores each wait's end and the CPU thread records them after the launch ({@link #lapAt(long)}). {@link #begin(long)} runs on the CPU
 * thread before the run's first iteration is queued, and the histogram is read after the run ended (after the
 * stream's last event), so each hand-over is ordered by the stream's queue or its event.
 */
final class RoundTrips {
    /** Three significant digits: 0.1 % resolution. The histogram grows to whatever range it meets. */
    private static final int DIGITS = 3;

    private final Histogram histogram = new Histogram(DIGITS);
    private final Runnable lapTask = this::lap;
    private long last;

    /**
     * Starts a run: the first round trip is timed from here.
     *
     * @param startNanos the run's start, from {@link System#nanoTime()}
     */
    void begin(long startNanos) {
        last = startNanos;
    }

    /** Ends a round trip: records the time since the previous mark (or {@link #begin}). */
    void lap() {
        long now = System.nanoTime();
        histogram.recordValue(Math.max(0, now - last));
        last = now;
    }

    /**
     * Ends a round trip at a time another thread read (a kernel thread's store): records the time since the
     * previous mark.
     *
     * @param nanos the end, from {@link System#nanoTime()}
     */
    void lapAt(long nanos) {
        histogram.recordValue(Math.max(0, nanos - last));
        last = nanos;
    }

    /**
     * Records a round trip another program timed (a C peer's).
     *
     * @param nanos the round trip
     */
    void record(long nanos) {
        histogram.recordValue(Math.max(0, nanos));
    }

    /** @return {@link #lap()} as a task, made once, for a stream to run after each receive */
    Runnable lapTask() {
        return lapTask;
    }

    /** @return the round trips recorded so far, in nanoseconds */
    Histogram histogram() {
        return histogram;
    }

    /** Forgets what was recorded (between a warm-up and the timed runs). */
    void reset() {
        histogram.reset();
    }
}
