package dev.gdasync.apps.pingpong;

/**
 * How far apart the timed runs of a mode at one size landed: the fastest and slowest run's one-way latency
 * (each run's time / round trips / 2) and their distance relative to the median run. A shared machine shows up
 * here first: another tenant, or this guest's speed changing level, moves whole runs.
 *
 * @param runs    how many timed runs
 * @param min     the fastest run's one-way latency, microseconds
 * @param max     the slowest run's one-way latency, microseconds
 * @param percent {@code (max - min) / median * 100}
 */
public record RunSpread(int runs, double min, double max, double percent) {
    /** For a row that came without its runs. */
    public static final RunSpread NONE = new RunSpread(0, Double.NaN, Double.NaN, Double.NaN);

    /**
     * @param oneWayMicros each run's one-way latency
     * @param median       their median
     * @return the spread
     */
    static RunSpread of(double[] oneWayMicros, double median) {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (double v : oneWayMicros) {
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        return new RunSpread(oneWayMicros.length, min, max, median > 0 ? (max - min) / median * 100 : 0);
    }

    /** @return whether the runs are known */
    public boolean isKnown() {
        return runs > 0;
    }
}
