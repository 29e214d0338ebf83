package dev.gdasync.gdsync.nic;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.ServiceLoader;

/**
 * Finds NIC providers by name. The default provider is the one {@code GDASYNC_NIC} names, else the software
 * NIC ({@value #DEFAULT}), which needs nothing but shared memory.
 */
public final class NicProviders {
    /** The provider used when none is named. */
    public static final String DEFAULT = "swnic";
    /** The environment variable that names the default provider. */
    public static final String ENV = "GDASYNC_NIC";

    private static volatile List<NicProvider> providers;

    private NicProviders() {
    }

    /** @return every provider on the module or class path, in discovery order */
    public static List<NicProvider> all() {
        List<NicProvider> p = providers;
        if (p == null) {
            List<NicProvider> found = new ArrayList<>();
            for (NicProvider provider : ServiceLoader.load(NicProvider.class, NicProviders.class.getClassLoader())) {
                found.add(provider);
            }
            p = List.copyOf(found);
            providers = p;
        }
        return p;
    }

    /**
     * @param name a provider's name (any case)
     * @return the provider
     * @throws NullPointerException     if the name is null
     * @throws IllegalArgumentException if no provider has that name; the message lists those there are
     */
    public static NicProvider named(String name) {
        Objects.requireNonNull(name, "name must not be null");
        String wanted = name.strip().toLowerCase(Locale.ROOT);
        List<String> names = new ArrayList<>();
        for (NicProvider p : all()) {
            if (p.name().equals(wanted)) {
                return p;
            }
            names.add(p.name());
        }
        throw new IllegalArgumentException("no NIC provider named '" + name + "': the providers here are " + names);
    }

    /**
     * @return the default settings of the default provider: {@code GDASYNC_NIC}'s, else {@value #DEFAULT}'s
     * @throws IllegalArgumentException if {@code GDASYNC_NIC} names no provider
     */
    public static NicConfig defaults() {
        String env = System.getenv(ENV);
        return named(env == null || env.isBlank() ? DEFAULT : env).defaults();
    }

    /**
     * Opens a NIC with the provider its settings name.
     *
     * @param config the settings
     * @return the NIC
     * @throws NullPointerException     if the settings are null
     * @throws IllegalArgumentException if no provider has the settings' name
     */
    public static Nic open(NicConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        return named(config.provider()).open(config);
    }
}
