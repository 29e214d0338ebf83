package dev.gdasync.apps.pingpong;

import java.util.Arrays;

/**
 * One measured row.
 *
 * @param mode         host, sa, ki, mpj or jucx
 * @param bytes        message size
 * @param iters        round trips per timed run
 * @param oneWayMicros half the round-trip time, median over the timed runs
 */
public record Result(String mode, int bytes, int iters, double oneWayMicros) {

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
        double[] oneWay = new double[runNanos.length];
        for (int i = 0; i < runNanos.length; i++) {
            oneWay[i] = runNanos[i] / 1000.0 / iters / 2;
        }
        return new Result(mode, bytes, iters, median(oneWay));
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        int n = c.length;
        return n % 2 == 1 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    }
}
