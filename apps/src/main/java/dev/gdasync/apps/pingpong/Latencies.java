package dev.gdasync.apps.pingpong;

import org.HdrHistogram.Histogram;

/**
 * The distribution of one-way latencies (round trip / 2) of every timed round trip of a mode at one size, in
 * microseconds, read from an HdrHistogram: its minimum, median, 99th and 99.9th percentiles and maximum.
 *
 * @param count how many round trips were recorded; 0 when the mode does not time each one ({@link #NONE})
 * @param min   the fastest
 * @param p50   the median
 * @param p99   the 99th percentile
 * @param p999  the 99.9th percentile
 * @param max   the slowest
 */
public record Latencies(long count, double min, double p50, double p99, double p999, double max) {
    /** For a mode whose round trips are not timed one by one. */
    public static final Latencies NONE = new Latencies(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

    /**
     * @param roundTripNanos round trips in nanoseconds
     * @return their one-way distribution in microseconds, or {@link #NONE} when the histogram is empty
     */
    public static Latencies ofRoundTrips(Histogram roundTripNanos) {
        long n = roundTripNanos.getTotalCount();
        if (n == 0) {
            return NONE;
        }
        return new Latencies(n, oneWay(roundTripNanos.getMinValue()), oneWay(roundTripNanos.getValueAtPercentile(50)),
                oneWay(roundTripNanos.getValueAtPercentile(99)), oneWay(roundTripNanos.getValueAtPercentile(99.9)),
                oneWay(roundTripNanos.getMaxValue()));
    }

    private static double oneWay(long roundTripNanos) {
        return roundTripNanos / 2000.0;
    }

    /** @return whether the round trips were timed one by one */
    public boolean isKnown() {
        return count > 0;
    }

    /**
     * @param count  how many round trips the median was taken over
     * @param p50    the one-way median a program reported (microseconds)
     * @return a distribution known by its median only (ucx_perftest reports no other percentile by default)
     */
    public static Latencies medianOnly(long count, double p50) {
        return new Latencies(count, Double.NaN, p50, Double.NaN, Double.NaN, Double.NaN);
    }
}
