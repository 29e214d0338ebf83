package dev.gdasync.gdsync.memory;

/** Where a region's bytes live. */
public enum RegionKind {
    /** Host memory mapped from a shared-memory file, so that peers on the node can map it too. */
    HOST,
    /** GPU memory: an address the host cannot load or store ({@code dev.gdasync.gdsync.cuda.DeviceRegion}). */
    DEVICE,
    /** A device's I/O page, such as a NIC doorbell page. */
    IO
}
