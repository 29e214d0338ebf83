package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memory.Region;

import java.lang.foreign.MemorySegment;

/**
 * A registered range of a region (verbs' {@code ibv_mr}): local work names it by lkey, peers by rkey.
 * Keys are unguessable and stop working the moment the region is deregistered.
 */
public interface MemoryRegion {

    /** @return the region the range belongs to */
    Region region();

    /** @return the range's offset in its region */
    long offset();

    /** @return the address of the range's first byte, as work requests name it */
    long address();

    /** @return the range's length in bytes */
    long length();

    /** @return the {@link Access} flags */
    int access();

    /** @return the key local work requests use */
    long lkey();

    /** @return the key peers use */
    long rkey();

    /** @return whether the registration is still in force */
    boolean isValid();

    /**
     * @return the host segment of exactly this range
     * @throws UnsupportedOperationException if the range is device memory, which has no host segment
     */
    MemorySegment segment();
}
