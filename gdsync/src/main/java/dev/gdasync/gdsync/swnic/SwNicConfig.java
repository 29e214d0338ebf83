package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.swnic.core.Layouts;
import dev.gdasync.gdsync.swnic.core.NicSettings;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link SoftwareNic}.
 *
 * @param jobId             the job whose shared-memory directory holds this NIC's files
 * @param shmBase           the base directory of shared-memory files
 * @param rnrTimeout        how long a SEND waits for the peer to post a receive (and for the peer
 *                          to connect) before it completes with RNR_RETRY_EXC_ERR
 * @param livenessInterval  how often the agent checks that connected peers are alive
 * @param mrCapacity        the most memory regions registered at once, at most 65536
 * @param agentIdle         how the agent idles when nothing is expected
 * @param agentHotIdle      how the agent idles while a doorbell rung by a plain store is expected or a
 *                          send waits for a receive
 * @param transport         how queue pairs reach their peers: shared memory, UCX, or shared memory on the
 *                          same host and UCX to other hosts
 * @param keyBits           the width of memory keys: 64 (a slot number and 48 random bits), or 32 (a slot number and
 *                          16 random bits, for a device whose work requests carry 32-bit keys, as mlx5's do)
 */
public record SwNicConfig(String jobId, Path shmBase, Duration rnrTimeout, Duration livenessInterval,
                          int mrCapacity, BackoffPolicy agentIdle, BackoffPolicy agentHotIdle, Transport transport,
                          int keyBits)
        implements NicConfig, NicSettings {

    /** The provider name of the software NIC. */
    public static final String PROVIDER = "swnic";

    /** Environment variable with the default job id. */
    public static final String JOB_ENV = "GDASYNC_JOB_ID";
    /** System property with the default receiver-not-ready timeout in milliseconds. */
    public static final String RNR_TIMEOUT_PROPERTY = "gdasync.swnic.rnr.timeout.ms";
    /** System property with the default transport: auto, shm or ucx. */
    public static final String TRANSPORT_PROPERTY = "gdasync.swnic.transport";
    /** Environment variable with the default transport, used when the property is not set. */
    public static final String TRANSPORT_ENV = "GDASYNC_TRANSPORT";

    /**
     * @throws NullPointerException     if a component is null
     * @throws IllegalArgumentException if a duration is not positive or longer than {@link WaitPolicy#MAX_TIMEOUT},
     *                                  or the capacity is out of range
     */
    public SwNicConfig {
        Objects.requireNonNull(jobId, "jobId must not be null");
        Objects.requireNonNull(shmBase, "shmBase must not be null");
        Objects.requireNonNull(rnrTimeout, "rnrTimeout must not be null");
        Objects.requireNonNull(livenessInterval, "livenessInterval must not be null");
        Objects.requireNonNull(agentIdle, "agentIdle must not be null");
        Objects.requireNonNull(agentHotIdle, "agentHotIdle must not be null");
        Objects.requireNonNull(transport, "transport must not be null");
        requireDuration("rnrTimeout", rnrTimeout);
        requireDuration("livenessInterval", livenessInterval);
        if (keyBits != 32 && keyBits != 64) {
            throw new IllegalArgumentException("keyBits must be 32 or 64, got " + keyBits);
        }
        if (mrCapacity < 1 || mrCapacity > Layouts.Mr.MAX_CAPACITY) {
            throw new IllegalArgumentException("mrCapacity must be in [1, " + Layouts.Mr.MAX_CAPACITY + "], got " + mrCapacity);
        }
    }

    /**
     * Defaults: the job from {@value #JOB_ENV} (or one of this process alone), the default shared-memory
     * base, a 30 s receiver-not-ready timeout (or {@value #RNR_TIMEOUT_PROPERTY}), liveness checks every
     * 20 ms, 4096 memory regions, the transport from {@value #TRANSPORT_PROPERTY} or {@value #TRANSPORT_ENV}
 * (default {@link Transport#AUTO}).
     *
     * @return the configuration
     * @throws IllegalArgumentException if the transport property or variable names no transport
     */
    public static SwNicConfig defaults() {
        String job = System.getenv(JOB_ENV);
        if (job == null || job.isBlank()) {
            job = "p" + ProcessHandle.current().pid();
        }
        long rnrMs = Long.getLong(RNR_TIMEOUT_PROPERTY, 30_000);
        String transport = System.getProperty(TRANSPORT_PROPERTY, System.getenv(TRANSPORT_ENV));
        return new SwNicConfig(job, ShmDirectory.defaultBase(), Duration.ofMillis(rnrMs), Duration.ofMillis(20),
                4096, BackoffPolicy.BACKGROUND, new BackoffPolicy(2_000, 100, 1_000, 20_000),
                transport == null || transport.isBlank() ? Transport.AUTO : Transport.parse(transport), 64);
    }

    private static void requireDuration(String name, Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + d);
        }
        if (d.compareTo(WaitPolicy.MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(name + " must be at most " + WaitPolicy.MAX_TIMEOUT
                    + " (Long.MAX_VALUE nanoseconds), got " + d);
        }
    }

    /** @return whether the transport is not {@link Transport#SHM}: peers on other hosts are reached over UCX */
    @Override
    public boolean offersUcx() {
        return transport != Transport.SHM;
    }

    /** @return whether the transport is {@link Transport#UCX}: peers on this host are reached over UCX too */
    @Override
    public boolean ucxOnThisHost() {
        return transport == Transport.UCX;
    }

    /** @return {@value #PROVIDER} */
    @Override
    public String provider() {
        return PROVIDER;
    }

    /**
     * @param jobId the job
     * @return this configuration for another job
     */
    @Override
    public SwNicConfig withJobId(String jobId) {
        return new SwNicConfig(jobId, shmBase, rnrTimeout, livenessInterval, mrCapacity, agentIdle, agentHotIdle, transport, keyBits);
    }

    /**
     * @param shmBase the base directory
     * @return this configuration with another shared-memory base
     */
    public SwNicConfig withShmBase(Path shmBase) {
        return new SwNicConfig(jobId, shmBase, rnrTimeout, livenessInterval, mrCapacity, agentIdle, agentHotIdle, transport, keyBits);
    }

    /**
     * @param rnrTimeout the timeout
     * @return this configuration with another receiver-not-ready timeout
     */
    public SwNicConfig withRnrTimeout(Duration rnrTimeout) {
        return new SwNicConfig(jobId, shmBase, rnrTimeout, livenessInterval, mrCapacity, agentIdle, agentHotIdle, transport, keyBits);
    }

    /**
     * @param livenessInterval the interval
     * @return this configuration with another liveness interval
     */
    public SwNicConfig withLivenessInterval(Duration livenessInterval) {
        return new SwNicConfig(jobId, shmBase, rnrTimeout, livenessInterval, mrCapacity, agentIdle, agentHotIdle, transport, keyBits);
    }

    /**
     * @param mrCapacity the capacity
     * @return this configuration with another memory-region capacity
     */
    public SwNicConfig withMrCapacity(int mrCapacity) {
        return new SwNicConfig(jobId, shmBase, rnrTimeout, livenessInterval, mrCapacity, agentIdle, agentHotIdle, transport, keyBits);
    }

    /**
     * @param transport the transport
     * @return this configuration with another transport
     */
    public SwNicConfig withTransport(Transport transport) {
        return new SwNicConfig(jobId, shmBase, rnrTimeout, livenessInterval, mrCapacity, agentIdle, agentHotIdle, transport, keyBits);
    }

    /**
     * @param keyBits 32 or 64
     * @return this configuration with another key width
     */
    public SwNicConfig withKeyBits(int keyBits) {
        return new SwNicConfig(jobId, shmBase, rnrTimeout, livenessInterval, mrCapacity, agentIdle, agentHotIdle, transport, keyBits);
    }
}
