package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.concurrent.BackoffPolicy;

import java.nio.file.Path;
import java.time.Duration;

/**
 * What the software NIC's core reads of its settings. The public settings record ({@code SwNicConfig}) implements
 * it, so the core never names the API package above it.
 */
public interface NicSettings {

    /** @return the job whose shared-memory directory holds the NIC's files */
    String jobId();

    /** @return the base directory of shared-memory files */
    Path shmBase();

    /** @return how long a request waits for the peer to post a receive (or to connect) */
    Duration rnrTimeout();

    /** @return how often the agent checks that peers are alive */
    Duration livenessInterval();

    /** @return the most memory regions registered at once */
    int mrCapacity();

    /** @return how the agent idles when nothing is expected */
    BackoffPolicy agentIdle();

    /** @return how the agent idles while a plain-store ring is expected or a send is stalled */
    BackoffPolicy agentHotIdle();

    /** @return whether queue pairs may reach peers over UCX at all (they must, for peers on other hosts) */
    boolean offersUcx();

    /** @return whether peers on this host are reached over UCX too, instead of shared memory */
    boolean ucxOnThisHost();

    /** @return the width of memory keys, 32 or 64 bits */
    int keyBits();
}
