package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.nic.NicProvider;

/** The software NIC as a {@link NicProvider}: {@value SwNicConfig#PROVIDER}, which needs nothing but shared memory. */
public final class SwNicProvider implements NicProvider {

    /** For {@link java.util.ServiceLoader}. */
    public SwNicProvider() {
    }

    @Override
    public String name() {
        return SwNicConfig.PROVIDER;
    }

    @Override
    public SwNicConfig defaults() {
        return SwNicConfig.defaults();
    }

    @Override
    public Nic open(NicConfig config) {
        java.util.Objects.requireNonNull(config, "config must not be null");
        if (!(config instanceof SwNicConfig sw)) {
            throw new IllegalArgumentException("the " + SwNicConfig.PROVIDER + " provider takes SwNicConfig settings, got "
                    + config.getClass().getName() + " for provider '" + config.provider() + "'");
        }
        return SoftwareNic.open(sw);
    }
}
