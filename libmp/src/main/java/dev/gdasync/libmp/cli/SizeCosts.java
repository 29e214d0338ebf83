package dev.gdasync.libmp.cli;

import java.util.TreeMap;

/**
 * What one round trip costs at a message size, learned from the runs timed so far, for a progress line's estimate
 * of the time left: measured for sizes already run, else drawn through the two largest sizes measured (a fixed
 * time plus a time per byte), else, with one size measured, that size's time plus {@value #GUESS_NANOS_PER_BYTE}
 * ns per byte.
 */
public final class SizeCosts {
    /** Round-trip nanoseconds per byte assumed before a second size was measured (about 4 GB/s each way). */
    public static final double GUESS_NANOS_PER_BYTE = 0.5;

    /** Bytes to {total nanoseconds, round trips}. */
    private final TreeMap<Integer, double[]> measured = new TreeMap<>();

    /** Knows nothing yet. */
    public SizeCosts() {
    }

    /**
     * Records a timed run.
     *
     * @param bytes      the message size
     * @param roundTrips how many round trips it made
     * @param nanos      how long it took
     */
    public void ran(int bytes, long roundTrips, long nanos) {
        if (roundTrips > 0 && nanos > 0) {
            double[] m = measured.computeIfAbsent(bytes, k -> new double[2]);
            m[0] += nanos;
            m[1] += roundTrips;
        }
    }

    /**
     * @param bytes a message size
     * @return the estimated nanoseconds of one round trip of it, or NaN before any run
     */
    public double nanosPerRoundTrip(int bytes) {
        double[] m = measured.get(bytes);
        if (m != null) {
            return m[0] / m[1];
        }
        if (measured.isEmpty()) {
            return Double.NaN;
        }
        int b2 = measured.lastKey();
        double p2 = mean(b2);
        double slope = GUESS_NANOS_PER_BYTE;
        Integer b1 = measured.lowerKey(b2);
        if (b1 != null) {
            slope = Math.max(0, (p2 - mean(b1)) / (b2 - b1));
        }
        return Math.max(0, p2 + slope * ((double) bytes - b2));
    }

    private double mean(int bytes) {
        double[] m = measured.get(bytes);
        return m[0] / m[1];
    }

    /**
     * @param seconds the time left, or NaN when unknown
     * @return "about 3 min 20 s left", or "estimating the time left"
     */
    public static String left(double seconds) {
        return Double.isNaN(seconds) ? "estimating the time left" : "about " + ProgressLine.duration(seconds) + " left";
    }
}
