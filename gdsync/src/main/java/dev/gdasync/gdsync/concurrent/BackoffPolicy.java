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

    /**
     * A CPU thread waiting for its peers (libmp's waits on the CPU): a short spin (a reply already on its way is
     * caught without a system call), then about ten milliseconds of yields before the first park. A peer busy
     * computing between two messages answers within that, as MPI libraries poll; a yield gives the CPU to any thread
     * that wants it (the NIC's agent, the JIT, another process) at once and costs about a microsecond when none does,
     * where a long spin would hold the CPU against them and a park lasts tens of microseconds at least on Linux,
     * whatever its timeout, and is late by as much when the answer comes. Oversubscribed, the first
     * {@link BackoffIdler#SHARED_SPINS} spins are kept and the rest are yields, as for every policy.
     */
    public static final BackoffPolicy PEER_WAIT = new BackoffPolicy(2_000, 20_000, 1_000, 50_000);

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
