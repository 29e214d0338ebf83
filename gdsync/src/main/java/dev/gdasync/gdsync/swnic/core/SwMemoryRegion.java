package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.MemoryRegion;

import java.lang.foreign.MemorySegment;

/**
 * A memory region of the software NIC: a range of a host or device region with a slot in the shared MR
 * table. A device range has no host segment; its addresses are device pointers.
 */
public final class SwMemoryRegion implements MemoryRegion, KeyedRange {
    private final MrTable table;
    private final Region region;
    private final boolean device;
    private final long offset;
    private final long length;
    private final int access;
    private final long lkey;
    private final long rkey;
    private final int slot;
    private final MemorySegment segment;
    private final DeviceMemory ownDevice;
    private volatile boolean valid = true;

    SwMemoryRegion(MrTable table, Region region, long offset, long length, int access, long lkey, long rkey, int slot) {
        this.table = table;
        this.region = region;
        this.device = region.kind() == RegionKind.DEVICE;
        this.offset = offset;
        this.length = length;
        this.access = access;
        this.lkey = lkey;
        this.rkey = rkey;
        this.slot = slot;
        this.segment = device ? null : region.segment().asSlice(offset, length);
        this.ownDevice = device ? new OwnDeviceMemory(region) : null;
    }

    /** @return the table it is registered in (a NIC deregisters only its own registrations) */
    public MrTable table() {
        return table;
    }

    int slot() {
        return slot;
    }

    void invalidate() {
        valid = false;
    }

    /** @return whether the registration was not yet deregistered */
    public boolean isRegistered() {
        return valid;
    }

    @Override
    public Region region() {
        return region;
    }

    /** @return whether the range is device memory (its addresses are device pointers) */
    public boolean isDevice() {
        return device;
    }

    @Override
    public long offset() {
        return offset;
    }

    @Override
    public long address() {
        return region.address() + offset;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public long lkey() {
        return lkey;
    }

    @Override
    public long rkey() {
        return rkey;
    }

    @Override
    public boolean isValid() {
        return valid && region.isOpen();
    }

    @Override
    public MemorySegment segment() {
        if (device) {
            throw new UnsupportedOperationException(this + " is GPU memory: it has no host segment; move bytes with "
                    + "DeviceRegion.copyFromHost/copyToHost, or with work requests");
        }
        return segment;
    }

    /**
     * @param address first byte
     * @param bytes   length
     * @return whether [address, address + bytes) lies inside this region
     */
    @Override
    public boolean contains(long address, long bytes) {
        long start = address();
        return address >= start && bytes >= 0 && bytes <= length && address - start <= length - bytes;
    }

    /** The whole region's segment: a host range's bytes are at {@link #hostOffset} in it. */
    @Override
    public MemorySegment hostMemory() {
        return device ? null : region.segment();
    }

    @Override
    public long hostOffset(long address) {
        return offset + (address - address());
    }

    /** This process's own device memory: the range's addresses are device pointers here. */
    @Override
    public DeviceMemory device() {
        return ownDevice;
    }

    @Override
    public long deviceAddress(long address) {
        return address;
    }

    @Override
    public String toString() {
        return "MemoryRegion{" + (device ? "device " : "") + "region=" + region.id() + ", offset=" + offset + ", bytes=" + length
                + ", access=" + Access.describe(access) + ", lkey=0x" + Long.toHexString(lkey)
                + ", rkey=0x" + Long.toHexString(rkey) + (valid ? "" : ", deregistered") + "}";
    }
}
