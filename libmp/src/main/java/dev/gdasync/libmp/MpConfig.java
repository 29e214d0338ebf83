package dev.gdasync.libmp;

import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.nic.NicProviders;
import dev.gdasync.gdsync.nic.QueuePairConfig;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of an {@link Mp}. Every component is checked when a configuration is made (the {@code with*} methods
 * make one through the canonical constructor, whose component names are their parameter names): a null is a
 * {@link NullPointerException} naming the component, a value out of range an {@link IllegalArgumentException}.
 *
 * @param nic          the NIC's settings, which name its provider ({@code swnic}, the software NIC, unless
 *                     {@value NicProviders#ENV} names another); the job id is replaced by the bootstrap's
 * @param queuePairs   depths of the queue pair to each peer (LibMP: 512 sends, 512 receives)
 * @param requestPool  the most requests outstanding at once
 * @param waitTimeout  how long {@link Mp#wait} and its relatives wait before failing
 */
public record MpConfig(NicConfig nic, QueuePairConfig queuePairs, int requestPool, Duration waitTimeout) {

    /**
     * @throws NullPointerException     if the NIC settings, the queue pair depths or the timeout is null
     * @throws IllegalArgumentException if the pool is not positive, or the timeout is not positive or longer than
     *                                  {@link WaitPolicy#MAX_TIMEOUT}
     */
    public MpConfig {
        Objects.requireNonNull(nic, "nic must not be null");
        Objects.requireNonNull(queuePairs, "queuePairs must not be null");
        Objects.requireNonNull(waitTimeout, "waitTimeout must not be null");
        if (requestPool < 1) {
            throw new IllegalArgumentException("requestPool must be >= 1, got " + requestPool);
        }
        if (waitTimeout.isNegative() || waitTimeout.isZero()) {
            throw new IllegalArgumentException("waitTimeout must be positive, got " + waitTimeout);
        }
        if (waitTimeout.compareTo(WaitPolicy.MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("waitTimeout must be at most " + WaitPolicy.MAX_TIMEOUT
                    + " (Long.MAX_VALUE nanoseconds), got " + waitTimeout);
        }
    }

    /**
     * Defaults: the default NIC provider's defaults ({@link NicProviders#defaults()}), LibMP's queue depths, 4096 requests, the wait timeout of
     * {@link WaitPolicy#defaults()} (60 s unless configured).
     *
     * @return the configuration
     */
    public static MpConfig defaults() {
        return new MpConfig(NicProviders.defaults(), QueuePairConfig.DEFAULT, 4096,
                Duration.ofNanos(WaitPolicy.defaults().timeoutNanos()));
    }

    /**
     * @param nic the NIC settings
     * @return this configuration with other NIC settings
     * @throws NullPointerException if the settings are null
     */
    public MpConfig withNic(NicConfig nic) {
        return new MpConfig(nic, queuePairs, requestPool, waitTimeout);
    }

    /**
     * @param queuePairs the depths
     * @return this configuration with other queue pair depths
     * @throws NullPointerException if the depths are null
     */
    public MpConfig withQueuePairs(QueuePairConfig queuePairs) {
        return new MpConfig(nic, queuePairs, requestPool, waitTimeout);
    }

    /**
     * @param requestPool the pool size, {@code >= 1}
     * @return this configuration with another request pool size
     * @throws IllegalArgumentException if the size is not positive
     */
    public MpConfig withRequestPool(int requestPool) {
        return new MpConfig(nic, queuePairs, requestPool, waitTimeout);
    }

    /**
     * @param waitTimeout the timeout, positive and at most {@link WaitPolicy#MAX_TIMEOUT}
     * @return this configuration with another wait timeout
     * @throws NullPointerException     if the timeout is null
     * @throws IllegalArgumentException if the timeout is not positive or too long
     */
    public MpConfig withWaitTimeout(Duration waitTimeout) {
        return new MpConfig(nic, queuePairs, requestPool, waitTimeout);
    }
}
