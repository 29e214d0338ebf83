package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.Medians;
import org.HdrHistogram.Histogram;

/**
 * One measured row.
 *
 * @param mode         host, sa, ki, mpj, mpj-niodev, jucx, or a C peer: floor, ompi, ucx
 * @param bytes        message size
 * @param iters        round trips per timed run
 * @param oneWayMicros half the round-trip time, median over the timed runs
 * @param latencies    the distribution of every timed round trip, one-way; {@link Latencies#NONE} when the mode does
 *                     not time them one by one
 * @param runs         how far apart the timed runs landed
 */
public record Result(String mode, int bytes, int iters, double oneWayMicros, Latencies latencies, RunSpread runs) {

    /**
     * A row with its median only.
     *
     * @param mode         the mode
     * @param bytes        the size
     * @param iters        round trips per run
     * @param oneWayMicros the median one-way latency
     */
    public Result(String mode, int bytes, int iters, double oneWayMicros) {
        this(mode, bytes, iters, oneWayMicros, Latencies.NONE, RunSpread.NONE);
    }

    /** @return megabytes (10^6 bytes) per second one way: {@code bytes / oneWayMicros} */
    public double megabytesPerSecond() {
        return bytes / oneWayMicros;
    }

    /**
     * @param mode  the mode
     * @param bytes the size
     * @param iters round trips per run
     * @param runNanos the elapsed time of each timed run
     * @return the row: one-way = median run time / iters / 2
     */
    static Result of(String mode, int bytes, int iters, long[] runNanos) {
        return of(mode, bytes, iters, runNanos, new Histogram(3));
    }

    /**
     * @param mode           the mode
     * @param bytes          the size
     * @param iters          round trips per run
     * @param runNanos       the elapsed time of each timed run
     * @param roundTripNanos every timed round trip (empty when the mode does not time them one by one)
     * @return the row: one-way = median run time / iters / 2, with the distribution and the runs' spread
     */
    static Result of(String mode, int bytes, int iters, long[] runNanos, Histogram roundTripNanos) {
        double[] oneWay = new double[runNanos.length];
        for (int i = 0; i < runNanos.length; i++) {
            oneWay[i] = runNanos[i] / 1000.0 / iters / 2;
        }
        double median = Medians.of(oneWay);
        return new Result(mode, bytes, iters, median, Latencies.ofRoundTrips(roundTripNanos), RunSpread.of(oneWay, median));
    }

}
