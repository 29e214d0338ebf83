package dev.gdasync.gdsync.nic;

/**
 * The settings of a NIC, as its provider reads them. Every provider has its own configuration type (the
 * software NIC's {@code SwNicConfig}); what all of them share is the provider's name, which
 * {@link NicProviders#open} looks up, and the job they belong to.
 */
public interface NicConfig {

    /** @return the name of the provider these settings are for, as {@link NicProvider#name()} says it */
    String provider();

    /** @return the job the NIC belongs to (processes of one job reach each other's NICs) */
    String jobId();

    /**
     * @param jobId the job's id, from the bootstrap
     * @return these settings for another job
     * @throws IllegalArgumentException if the id is not usable by the provider
     */
    NicConfig withJobId(String jobId);
}
