package dev.gdasync.gdsync.nic;

/**
 * A kind of NIC: the software NIC ({@code swnic}) or a hardware one. Providers are found through
 * {@link java.util.ServiceLoader} (a {@code provides} clause in a module descriptor, or a
 * {@code META-INF/services} entry on the class path) and looked up by name with {@link NicProviders}.
 */
public interface NicProvider {

    /** @return the provider's name, as configurations and {@code GDASYNC_NIC} name it */
    String name();

    /**
     * @return the provider's default settings (its own environment variables applied)
     */
    NicConfig defaults();

    /**
     * Opens a NIC.
     *
     * @param config settings of this provider
     * @return the NIC
     * @throws IllegalArgumentException if the settings are another provider's
     * @throws IllegalStateException    if the NIC cannot be opened here (what is missing is said)
     */
    Nic open(NicConfig config);
}
