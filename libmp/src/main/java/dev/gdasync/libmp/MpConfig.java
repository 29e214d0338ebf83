package dev.gdasync.libmp;

import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.nic.NicProviders;
import dev.gdasync.gdsync.nic.QueuePairConfig;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of an {@link Mp}.
 *
 * @param nic          the NIC's settings, which name its provider ({@code swnic}, the software NIC, unless
 *                     {@value NicProviders#ENV} names another); the job id is replaced by the bootstrap's
 * @param queuePairs   depths of the queue pair to each peer (LibMP: 512 sends, 512 receives)
 * @param requestPool  the most requests outstanding at once
 * @param waitTimeout  how long {@link Mp#wait} and its relatives wait before failing
 */
public record MpConfig(NicConfig nic, QueuePairConfig queuePairs, int requestPool, Duration waitTimeout) {

    /**
     * @throws IllegalArgumentException if the pool is not positive or the timeout not positive
     */
    public MpConfig {
        Objects.requireNonNull(nic, "nic");
        Objects.requireNonNull(queuePairs, "queuePairs");
        if (requestPool < 1) {
            throw new IllegalArgumentException("requestPool must be >= 1, got " + requestPool);
        }
        if (waitTimeout.isNegative() || waitTimeout.isZero()) {
            throw new IllegalArgumentException("waitTimeout must be positive, got " + waitTimeout);
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
     */
    public MpConfig withNic(NicConfig nic) {
        return new MpConfig(nic, queuePairs, requestPool, waitTimeout);
    }

    /**
     * @param queuePairs the depths
     * @return this configuration with other queue pair depths
     */
    public MpConfig withQueuePairs(QueuePairConfig queuePairs) {
        return new MpConfig(nic, queuePairs, requestPool, waitTimeout);
    }

    /**
     * @param requestPool the pool size
     * @return this configuration with another request pool size
     */
    public MpConfig withRequestPool(int requestPool) {
        return new MpConfig(nic, queuePairs, requestPool, waitTimeout);
    }

    /**
     * @param waitTimeout the timeout
     * @return this configuration with another wait timeout
     */
    public MpConfig withWaitTimeout(Duration waitTimeout) {
        return new MpConfig(nic, queuePairs, requestPool, waitTimeout);
    }
}
