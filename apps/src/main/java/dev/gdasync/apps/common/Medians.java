package dev.gdasync.apps.common;

import java.util.Arrays;

/** The median the benchmarks report over their reps. */
public final class Medians {
    private Medians() {
    }

    /**
     * @param values at least one value (not changed)
     * @return their median (the mean of the two middle ones for an even count)
     */
    public static double of(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
