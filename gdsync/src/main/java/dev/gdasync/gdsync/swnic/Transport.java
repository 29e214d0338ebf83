package dev.gdasync.gdsync.swnic;

import java.util.Locale;

/** How a software NIC's queue pairs reach their peers. */
public enum Transport {
    /** Shared memory for a peer on this host, UCX for a peer on another host (the default). */
    AUTO,
    /** Shared memory only: a peer on another host cannot be connected. */
    SHM,
    /** UCX for every peer, on this host too (to measure or test the UCX path on one host). */
    UCX;

    /**
     * @param name auto, shm or ucx (any case)
     * @return the transport
     * @throws IllegalArgumentException for any other name
     */
    public static Transport parse(String name) {
        return switch (name.strip().toLowerCase(Locale.ROOT)) {
            case "auto" -> AUTO;
            case "shm" -> SHM;
            case "ucx" -> UCX;
            default -> throw new IllegalArgumentException("unknown transport '" + name + "': auto, shm or ucx");
        };
    }
}
