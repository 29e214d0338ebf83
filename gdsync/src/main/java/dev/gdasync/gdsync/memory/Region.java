package dev.gdasync.gdsync.memory;

import java.lang.foreign.MemorySegment;

/**
 * A range of memory the NIC model works on: a segment and its device-visible address. A
 * {@link RegionKind#DEVICE} region has an address but no host segment.
 */
public interface Region extends AutoCloseable {

    /** @return where the bytes live */
    RegionKind kind();

    /** @return an id unique among the regions of its owner */
    long id();

    /** @return the length in bytes */
    long length();

    /**
     * @return the host-accessible segment of the region
     * @throws IllegalStateException         if the region is closed
     * @throws UnsupportedOperationException if the host cannot access the region's bytes
     *                                       ({@link RegionKind#DEVICE} memory)
     */
    MemorySegment segment();

    /** @return the address a device or a peer's NIC uses to name the region's first byte */
    long address();

    /** @return whether the region is still usable */
    boolean isOpen();

    /** Releases the region; its segment is unusable afterwards. Closing twice does nothing. */
    @Override
    void close();
}
