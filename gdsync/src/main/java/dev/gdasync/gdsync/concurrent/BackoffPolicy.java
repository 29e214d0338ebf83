package dev.gdasync.gdsync.concurrent;

/**
 * How a polling thread idles: {@code spins} busy iterations, then {@code yields} calls to
 * {@link Thread#yield()}, then parks starting at {@code minParkNanos} and doubling up to
 * {@code maxParkNanos}.
 *
 * @param spins        busy-spin iterations before yielding
 * @param yields       yields before parking
 * @param minParkNanos first park time
 * @param maxParkNanos longest park time: the bound on how late a polled word is noticed once parked
 */
public record BackoffPolicy(long spins, long yields, long minParkNanos, long maxParkNanos) {

    /** Low latency for a thread that expects work soon: long spin, short parks. */
    public static final BackoffPolicy LOW_LATENCY = new BackoffPolicy(20_000, 200, 1_000, 50_000);

    /** Background polling: short spin, parks up to one millisecond. */
    public static final BackoffPolicy BACKGROUND = new BackoffPolicy(1_000, 100, 10_000, 1_000_000);

    /**
     * Validates the phases.
     *
     * @throws IllegalArgumentException if a count is negative or the park times are not
     *                                  {@code 0 < minParkNanos <= maxParkNanos}
     */
    public BackoffPolicy {
        if (spins < 0 || yields < 0) {
            throw new IllegalArgumentException("spins and yields must be >= 0, got spins=" + spins + " yields=" + yields);
        }
        if (minParkNanos <= 0 || maxParkNanos < minParkNanos) {
            throw new IllegalArgumentException(
                    "park times must satisfy 0 < minParkNanos <= maxParkNanos, got " + minParkNanos + " and " + maxParkNanos);
        }
    }
}
