package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.MemoryRegion;

import java.lang.foreign.MemorySegment;

/** A registration of the mlx5 provider: a range of a region and its two 32-bit keys. */
final class Mlx5MemoryRegion implements MemoryRegion {
    private final Region region;
    private final long offset;
    private final long length;
    private final int access;
    private final Mlx5Keys keys;
    private volatile boolean valid = true;

    Mlx5MemoryRegion(Region region, long offset, long length, int access, Mlx5Keys keys) {
        this.region = region;
        this.offset = offset;
        this.length = length;
        this.access = access;
        this.keys = keys;
    }

    @Override
    public Region region() {
        return region;
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
        return Integer.toUnsignedLong(keys.lkey());
    }

    @Override
    public long rkey() {
        return Integer.toUnsignedLong(keys.rkey());
    }

    @Override
    public boolean isValid() {
        return valid && region.isOpen();
    }

    @Override
    public MemorySegment segment() {
        return region.segment().asSlice(offset, length);
    }

    Mlx5Keys keys() {
        return keys;
    }

    boolean isDevice() {
        return region.kind() == RegionKind.DEVICE;
    }

    /** @return whether {@code [address, address + bytes)} lies inside the registration */
    boolean contains(long address, long bytes) {
        long start = address();
        return address >= start && bytes >= 0 && address - start <= length - bytes;
    }

    void invalidate() {
        valid = false;
    }

    @Override
    public String toString() {
        return "Mlx5MemoryRegion{0x" + Long.toHexString(address()) + "+" + length + ", " + Access.describe(access)
                + ", lkey=0x" + Integer.toHexString(keys.lkey()) + ", rkey=0x" + Integer.toHexString(keys.rkey())
                + (valid ? "" : ", deregistered") + "}";
    }
}
