package dev.gdasync.gdsync.concurrent;

/**
 * How a polling thread idles: {@code spins} busy iterations, then calls to {@link Thread#yield()}, then parks
 * starting at {@code minParkNanos} and doubling up to {@code maxParkNanos}.
 *
 * <p>How many yields come before the first park depends on the CPUs ({@link CpuShare#yielding()}): {@code yields}
 * while the host's ranks outnumber its CPUs, {@code patientYields} while every rank has a CPU of its own. A thread
 * waiting for a peer that is computing and will answer soon keeps its CPU that way (a yield gives it to any thread
 * that wants it, and costs about a microsecond when none does), instead of a park, which on Linux lasts tens of
 * microseconds at least whatever its timeout, and is late by as much when the answer comes.
 *
 * @param spins         busy-spin iterations before yielding
 * @param yields        yields before parking while the CPUs are oversubscribed
 * @param minParkNanos  first park time
 * @param maxParkNanos  longest park time: the bound on how late a polled word is noticed once parked
 * @param patientYields yields before parking while every rank has a CPU
 */
public record BackoffPolicy(long spins, long yields, long minParkNanos, long maxParkNanos, long patientYields) {

    /** Low latency for a thread that expects work soon: long spin, short parks. */
    public static final BackoffPolicy LOW_LATENCY = new BackoffPolicy(20_000, 200, 1_000, 50_000);

    /**
     * A CPU thread waiting for its peers (libmp's waits on the CPU): {@link #LOW_LATENCY}, and while every rank has
     * a CPU, about ten milliseconds of yields (twenty thousand) before the first park, as MPI libraries poll: a
     * peer busy computing between two messages answers within that, and a park would add its own tens of
     * microseconds to every such wait.
     */
    public static final BackoffPolicy PEER_WAIT = new BackoffPolicy(20_000, 200, 1_000, 50_000, 20_000);

    /** Background polling: short spin, parks up to one millisecond. */
    public static final BackoffPolicy BACKGROUND = new BackoffPolicy(1_000, 100, 10_000, 1_000_000);

    /**
     * Validates the phases.
     *
     * @throws IllegalArgumentException if a count is negative or the park times are not
     *                                  {@code 0 < minParkNanos <= maxParkNanos}
     */
    public BackoffPolicy {
        if (spins < 0 || yields < 0 || patientYields < 0) {
            throw new IllegalArgumentException("spins and yields must be >= 0, got spins=" + spins + " yields=" + yields
                    + " patientYields=" + patientYields);
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
