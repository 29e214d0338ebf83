package dev.gdasync.gdsync.concurrent;

/**
 * Work another part of the project hands to an agent it does not own: the software mlx5 device runs its engine on
 * the software NIC's agent thread this way, so that one thread plays the hardware for both.
 *
 * <p>Called on the agent's thread, once per duty cycle; {@link #runOnCaller()} is called by a host thread that
 * played a kernel and progresses its own plain-store rings.
 */
public interface AgentDuty {

    /**
     * One pass of the duty.
     *
     * @param nowNanos the agent's clock
     * @return the work done (0 lets the agent idle)
     */
    int doWork(long nowNanos);

    /** @return whether the agent should poll eagerly (a plain-store ring is expected, work is in flight) */
    default boolean wantsEagerPolling() {
        return false;
    }

    /**
     * Runs work rung by plain stores on the calling thread, which is not the agent's.
     *
     * @return the work done
     */
    default int runOnCaller() {
        return 0;
    }
}
