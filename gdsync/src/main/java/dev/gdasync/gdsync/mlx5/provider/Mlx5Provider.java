package dev.gdasync.gdsync.mlx5.provider;

import dev.gdasync.gdsync.mlx5.Mlx5Device;
import dev.gdasync.gdsync.mlx5.Mlx5Nic;
import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.nic.NicProvider;

/**
 * The mlx5 provider as a {@link NicProvider}: {@value Mlx5Config#PROVIDER}. Opens the device its settings name
 * ({@link Mlx5Config#device()}) and the mlx5 NIC on it.
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
            LOG.log(System.Logger.Level.DEBUG, "no mlx5 hardware path in this build: using the software mlx5 device");
            return SoftMlx5Device.open(config.software());
        }
        throw new IllegalArgumentException("mlx5 device '" + wanted + "' not found");
    }
}
