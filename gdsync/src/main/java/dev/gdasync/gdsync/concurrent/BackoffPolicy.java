package dev.gdasync.gdsync.concurrent;

/**
 * How a polling thread idles: {@code spins} busy iterations, then calls to {@link Thread#yield()}, then parks
 * starting at {@code minParkNanos} and doubling up to {@code maxParkNanos}.
 *
 * <p>How many yields come before the first park may depend on the CPUs ({@link CpuShare#yielding()}): {@code yields}
 * while the host's ranks (and other processes) outnumber its CPUs, {@code ownCpuYields} while every rank has a CPU
 * of its own. Most policies yield as often either way; {@link #PEER_WAIT} parks early when oversubscribed, because its
 * parks end as soon as a peer delivers.
 *
 * @param spins        busy-spin iterations before yielding
 * @param yields       yields before parking while the CPUs are oversubscribed
 * @param minParkNanos first park time
 * @param maxParkNanos longest park time: the bound on how late a polled word is noticed once parked
 * @param ownCpuYields yields before parking while every rank has a CPU
 */
public record BackoffPolicy(long spins, long yields, long minParkNanos, long maxParkNanos, long ownCpuYields) {

    /** Low latency for a thread that expects work soon: long spin, short parks. */
    public static final BackoffPolicy LOW_LATENCY = new BackoffPolicy(20_000, 200, 1_000, 50_000);

    /**
     * A thread waiting for a peer through memory nobody wakes it on (a host stream's waits, and its idling between
     * items): a short spin (a reply already on its way is caught without a system call), then about ten milliseconds
     * of yields (twenty thousand) before the first park. A yield gives the CPU at once to any thread that wants it
     * (the thread that posts the stream's next work, the NIC's agent, the JIT, another process) and costs about a
     * microsecond when none does; a long spin would hold the CPU against them, and a park lasts tens of microseconds
     * at least on Linux whatever its timeout, late by as much when the answer comes.
     */
    public static final BackoffPolicy SPIN_THEN_YIELD = new BackoffPolicy(2_000, 20_000, 1_000, 50_000);

    /**
     * A CPU thread waiting for its peers, whose parks a peer cuts short (libmp's waits on the CPU, parked through the
     * NIC's {@code awaitPeers}): with a CPU per rank as {@link #SPIN_THEN_YIELD}, as MPI libraries poll; oversubscribed,
     * a few yields and then parks, as MPI libraries block, so that the rank the waiter shares a CPU with runs without
     * a yielding neighbour, and the waiter is woken by the delivery itself.
     */
    public static final BackoffPolicy PEER_WAIT = new BackoffPolicy(2_000, 200, 1_000, 50_000, 20_000);

    /** Background polling: short spin, parks up to one millisecond. */
    public static final BackoffPolicy BACKGROUND = new BackoffPolicy(1_000, 100, 10_000, 1_000_000);

    /**
     * Validates the phases.
     *
     * @throws IllegalArgumentException if a count is negative or the park times are not
     *                                  {@code 0 < minParkNanos <= maxParkNanos}
     */
    public BackoffPolicy {
        if (spins < 0 || yields < 0 || ownCpuYields < 0) {
            throw new IllegalArgumentException("spins and yields must be >= 0, got spins=" + spins + " yields=" + yields
                    + " ownCpuYields=" + ownCpuYields);
        }
        if (minParkNanos <= 0 || maxParkNanos < minParkNanos) {
            throw new IllegalArgumentException(
                    "park times must satisfy 0 < minParkNanos <= maxParkNanos, got " + minParkNanos + " and " + maxParkNanos);
        }
    }

    /**
     * A policy that yields as often whether or not the CPUs are oversubscribed.
     *
     * @param spins        busy-spin iterations before yielding
     * @param yields       yields before parking
     * @param minParkNanos first park time
     * @param maxParkNanos longest park time
     * @throws IllegalArgumentException as the canonical constructor
     */
    public BackoffPolicy(long spins, long yields, long minParkNanos, long maxParkNanos) {
        this(spins, yields, minParkNanos, maxParkNanos, yields);
    }
}
