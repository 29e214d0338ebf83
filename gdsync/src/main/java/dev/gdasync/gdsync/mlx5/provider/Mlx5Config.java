package dev.gdasync.gdsync.mlx5.provider;

import dev.gdasync.gdsync.mlx5.CqWaitMode;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.util.Objects;

/**
 * Settings of the mlx5 provider.
 *
 * @param device   which device: {@value #AUTO} (the first ConnectX device when there is one, else the software mlx5
 *                 device), {@value #SOFT} (the software mlx5 device), or a verbs device name ({@code mlx5_0})
 * @param port     the device port (hardware), from 1
 * @param gidIndex the GID table index used for RoCE addressing (hardware)
 * @param cqWait   how prepared waits test CQEs
 * @param software the settings of the software NIC under the software mlx5 device (job, shared memory,
 *                 transports); its key width is set to 32 bits
 */
public record Mlx5Config(String device, int port, int gidIndex, CqWaitMode cqWait, SwNicConfig software)
        implements NicConfig {
    /** The provider name. */
    public static final String PROVIDER = "mlx5";
    /** {@link #device()}: hardware when there is one, else the software device. */
    public static final String AUTO = "auto";
    /** {@link #device()}: the software mlx5 device. */
    public static final String SOFT = "soft";
    /** Environment variable with the default {@link #device()}. */
    public static final String DEVICE_ENV = "GDASYNC_MLX5_DEVICE";
    /** System property with the default {@link #device()} (wins over the environment). */
    public static final String DEVICE_PROPERTY = "gdasync.mlx5.device";
    /** System property with the default port. */
    public static final String PORT_PROPERTY = "gdasync.mlx5.port";
    /** System property with the default GID index. */
    public static final String GID_PROPERTY = "gdasync.mlx5.gid";
    /** System property with the default CQ wait mode ({@code owner} or {@code geq}). */
    public static final String CQ_WAIT_PROPERTY = "gdasync.mlx5.cqwait";

    /** @throws IllegalArgumentException if a value is out of range */
    public Mlx5Config {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(cqWait, "cqWait");
        Objects.requireNonNull(software, "software");
        if (device.isBlank()) {
            throw new IllegalArgumentException("the mlx5 device must be " + AUTO + ", " + SOFT + " or a device name, got a blank");
        }
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("the mlx5 port must be in [1, 255], got " + port);
        }
        if (gidIndex < 0 || gidIndex > 255) {
            throw new IllegalArgumentException("the mlx5 GID index must be in [0, 255], got " + gidIndex);
        }
        software = software.withKeyBits(32);
    }

    /**
     * @return the defaults: the device from {@value #DEVICE_PROPERTY} or {@value #DEVICE_ENV} (else {@value #AUTO}),
     *         port 1, GID index 0, owner-bit waits, the software NIC's defaults
     */
    public static Mlx5Config defaults() {
        String device = System.getProperty(DEVICE_PROPERTY, System.getenv(DEVICE_ENV));
        String wait = System.getProperty(CQ_WAIT_PROPERTY, "owner");
        return new Mlx5Config(device == null || device.isBlank() ? AUTO : device.strip(), Integer.getInteger(PORT_PROPERTY, 1),
                Integer.getInteger(GID_PROPERTY, 0), CqWaitMode.parse(wait), SwNicConfig.defaults());
    }

    /** @return {@value #PROVIDER} */
    @Override
    public String provider() {
        return PROVIDER;
    }

    /** @return the job, the software NIC's */
    @Override
    public String jobId() {
        return software.jobId();
    }

    /**
     * @param jobId the job
     * @return these settings for another job
     */
    @Override
    public Mlx5Config withJobId(String jobId) {
        return new Mlx5Config(device, port, gidIndex, cqWait, software.withJobId(jobId));
    }

    /**
     * @param device {@value #AUTO}, {@value #SOFT} or a device name
     * @return these settings with another device
     */
    public Mlx5Config withDevice(String device) {
        return new Mlx5Config(device, port, gidIndex, cqWait, software);
    }

    /**
     * @param cqWait the mode
     * @return these settings with another CQ wait mode
     */
    public Mlx5Config withCqWait(CqWaitMode cqWait) {
        return new Mlx5Config(device, port, gidIndex, cqWait, software);
    }

    /**
     * @param software the software NIC's settings
     * @return these settings over another software NIC
     */
    public Mlx5Config withSoftware(SwNicConfig software) {
        return new Mlx5Config(device, port, gidIndex, cqWait, software);
    }
}
