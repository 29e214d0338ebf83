package dev.gdasync.libmp.coll;

/** OSU's overlap of communication with computation, for the non-blocking collective benchmarks. */
public final class Overlap {
    private Overlap() {
    }

    /**
     * OMB's {@code overlap = max(0, 100 − (overall − (compute − test)) / pure · 100)}, capped at 100 (overall can
     * dip below compute by noise, which would give more than full overlap).
     *
     * @param overall the overlapped loop's time per iteration
     * @param compute the dummy compute's time
     * @param test    the time spent in interleaved {@code test} calls
     * @param pure    the communication's time without compute, &gt; 0
     * @return the overlap in percent, 0 … 100
     * @throws IllegalArgumentException if a time is negative or not finite, or pure is 0
     */
    public static double percent(double overall, double compute, double test, double pure) {
        requireTime("overall", overall);
        requireTime("compute", compute);
        requireTime("test", test);
        requireTime("pure", pure);
        if (pure == 0) {
            throw new IllegalArgumentException("pure must be > 0, got 0");
        }
        double p = 100 - (overall - (compute - test)) / pure * 100;
        return Math.min(100, Math.max(0, p));
    }

    private static void requireTime(String name, double t) {
        if (!(t >= 0) || Double.isInfinite(t)) {
            throw new IllegalArgumentException(name + " must be a finite time >= 0, got " + t);
        }
    }
}
