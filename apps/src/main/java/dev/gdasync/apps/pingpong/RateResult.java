package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.Medians;
import org.HdrHistogram.Histogram;

import java.util.Arrays;

/**
 * One message-rate row: a mode at one size.
 *
 * @param mode              host, sa, jucx or mpj
 * @param bytes             message size
 * @param window            messages per window
 * @param iters             windows per timed run
 * @param messagesPerSecond messages per second, from the median run
 * @param runMin            the slowest run's rate
 * @param runMax            the fastest run's rate
 * @param windowP50Micros   the median time of one window (its sends and the acknowledgement), microseconds; NaN when
 *                          not timed one by one
 * @param windowP99Micros   the 99th percentile of that time
 */
public record RateResult(String mode, int bytes, int window, int iters, double messagesPerSecond, double runMin,
                         double runMax, double windowP50Micros, double windowP99Micros) {

    /** @return megabytes (10^6 bytes) per second: {@code messagesPerSecond * bytes / 10^6} */
    public double megabytesPerSecond() {
        return messagesPerSecond * bytes / 1e6;
    }

    /** @return {@code (runMax - runMin) / messagesPerSecond * 100} */
    public double spreadPercent() {
        return messagesPerSecond > 0 ? (runMax - runMin) / messagesPerSecond * 100 : Double.NaN;
    }

    /**
     * @param mode       the mode
     * @param bytes      the size
     * @param window     messages per window
     * @param iters      windows per run
     * @param runNanos   each timed run's time
     * @param windowNanos every timed window, nanoseconds
     * @return the row: the median run's rate, the runs' range and the windows' percentiles
     */
    static RateResult of(String mode, int bytes, int window, int iters, long[] runNanos, Histogram windowNanos) {
        double[] rates = new double[runNanos.length];
        for (int i = 0; i < runNanos.length; i++) {
            rates[i] = (double) window * iters / (runNanos[i] / 1e9);
        }
        double[] sorted = rates.clone();
        Arrays.sort(sorted);
        boolean timed = windowNanos.getTotalCount() > 0;
        return new RateResult(mode, bytes, window, iters, Medians.of(rates), sorted[0], sorted[sorted.length - 1],
                timed ? windowNanos.getValueAtPercentile(50) / 1000.0 : Double.NaN,
                timed ? windowNanos.getValueAtPercentile(99) / 1000.0 : Double.NaN);
    }
}
