package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.memory.Region;

/**
 * A device region of this process, reached as it is: its device pointers are valid here, and it is usable while
 * it is open.
 *
 * @param region the device region
 */
public record OwnDeviceMemory(Region region) implements DeviceMemory {
    @Override
    public long base() {
        return region.address();
    }

    @Override
    public long length() {
        return region.length();
    }

    @Override
    public boolean isUsable() {
        return region.isOpen();
    }
}
