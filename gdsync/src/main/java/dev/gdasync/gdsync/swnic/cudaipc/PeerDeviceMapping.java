package dev.gdasync.gdsync.swnic.cudaipc;

import dev.gdasync.gdsync.swnic.core.DeviceMemory;

import java.lang.foreign.MemorySegment;

/**
 * A peer's device region mapped into this process through CUDA IPC: one entry of a
 * {@code shm.PeerNode}'s registration cache. It is usable while it is mapped and its owner has not
 * begun to free the region; {@link #close} unmaps it (under {@link DeviceCopyLock}) and frees this
 * process's slot in the region's handle file, which lets the owner free the memory.
 */
public final class PeerDeviceMapping implements DeviceMemory {
    private final long regionId;
    private final long base;
    private final long length;
    private final MemorySegment handleFile;
    private final int slot;
    private volatile boolean mapped = true;

    public PeerDeviceMapping(long regionId, long base, long length, MemorySegment handleFile, int slot) {
        this.regionId = regionId;
        this.base = base;
        this.length = length;
        this.handleFile = handleFile;
        this.slot = slot;
    }

    @Override
    public long base() {
        return base;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public boolean isUsable() {
        return mapped && DeviceHandleFile.isLive(handleFile);
    }

    /** @return whether the owner began to free the region, so the mapping should go */
    public boolean ownerClosing() {
        return !DeviceHandleFile.isLive(handleFile);
    }

    public boolean isMapped() {
        return mapped;
    }

    /**
     * Unmaps (once): marks the mapping unusable, waits for copies in progress, closes the IPC mapping,
     * then frees the slot. The handle file must still be mapped.
     *
     * @param support the CUDA state the mapping was opened with
     * @return the driver's complaint, or null
     */
    public String close(DeviceSupport support) {
        RuntimeException failure = null;
        synchronized (DeviceCopyLock.LOCK) {
            if (!mapped) {
                return null;
            }
            mapped = false;
            try {
                support.closeIpc(base);
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        DeviceHandleFile.release(handleFile, slot);
        return failure == null ? null : failure.getMessage();
    }

    @Override
    public String toString() {
        return "device region " + regionId + " mapped at 0x" + Long.toHexString(base) + " (" + length + " bytes)";
    }
}
