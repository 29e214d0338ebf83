package dev.gdasync.gdsync.mlx5.provider;

import dev.gdasync.gdsync.mlx5.Mlx5Device;
import dev.gdasync.gdsync.mlx5.Mlx5Nic;
import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.mlx5.verbs.HardwareMlx5Device;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.nic.NicProvider;

/**
 * The mlx5 provider as a {@link NicProvider}: {@value Mlx5Config#PROVIDER}. Opens the device its settings name
 * ({@link Mlx5Config#device()}) and the mlx5 NIC on it: a ConnectX NIC through verbs, or the software mlx5 device
 * (asked for by name, or when {@value Mlx5Config#AUTO} finds no ConnectX device, which it logs at INFO).
 */
public final class Mlx5Provider implements NicProvider {
    private static final System.Logger LOG = System.getLogger("dev.gdasync.gdsync.mlx5");

    /** For {@link java.util.ServiceLoader}. */
    public Mlx5Provider() {
    }

    @Override
    public String name() {
        return Mlx5Config.PROVIDER;
    }

    @Override
    public Mlx5Config defaults() {
        return Mlx5Config.defaults();
    }

    @Override
    public Nic open(NicConfig config) {
        if (!(config instanceof Mlx5Config m)) {
            throw new IllegalArgumentException("the " + Mlx5Config.PROVIDER + " provider takes Mlx5Config settings, got "
                    + config.getClass().getName() + " for provider '" + config.provider() + "'");
        }
        return Mlx5Nic.open(device(m), m.cqWait());
    }

    /**
     * @param config the settings
     * @return the device they name
     */
    static Mlx5Device device(Mlx5Config config) {
        String wanted = config.device();
        if (wanted.equalsIgnoreCase(Mlx5Config.SOFT)) {
            return SoftMlx5Device.open(config.software());
        }
        if (wanted.equalsIgnoreCase(Mlx5Config.AUTO)) {
            String absent = HardwareMlx5Device.absentReason();
            if (absent != null) {
                LOG.log(System.Logger.Level.DEBUG, "no ConnectX device here, so the mlx5 provider runs on the software mlx5"
                        + " device (" + absent + ")");
                return SoftMlx5Device.open(config.software());
            }
            return HardwareMlx5Device.open(null, config.port(), config.gidIndex());
        }
        return HardwareMlx5Device.open(wanted, config.port(), config.gidIndex());
    }
}
