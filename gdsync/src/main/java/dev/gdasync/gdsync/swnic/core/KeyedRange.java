package dev.gdasync.gdsync.swnic.core;

import java.lang.foreign.MemorySegment;

/**
 * A registered range as an executor sees it once a key resolved to it: its bounds and access flags as the owner
 * registered them, and where its bytes are in the executing process. This NIC's own registrations
 * ({@link SwMemoryRegion}) and a peer's as mapped here are both keyed ranges, so one {@link AccessChecker}
 * decides every access.
 */
public interface KeyedRange {

    /** @return the address of the first byte, as work requests name it */
    long address();

    /** @return the length in bytes */
    long length();

    /** @return the {@link dev.gdasync.gdsync.nic.Access} flags */
    int access();

    /** @return the host segment holding the bytes (the whole region's mapping here), or null for device memory */
    MemorySegment hostMemory();

    /**
     * @param address an address inside the range
     * @return its offset in {@link #hostMemory()}
     */
    long hostOffset(long address);

    /**
     * @return the device memory holding the bytes as reached here, null for host memory, or
     *         {@link DeviceMemory#UNREACHABLE} when it cannot be mapped into this process
     */
    DeviceMemory device();

    /**
     * @param address an address inside the range
     * @return its device address in this process; device memory only
     */
    long deviceAddress(long address);

    /**
     * @param address first byte
     * @param bytes   length
     * @return whether [address, address + bytes) lies inside the range
     */
    default boolean contains(long address, long bytes) {
        long start = address();
        long length = length();
        return address >= start && bytes >= 0 && bytes <= length && address - start <= length - bytes;
    }
}
