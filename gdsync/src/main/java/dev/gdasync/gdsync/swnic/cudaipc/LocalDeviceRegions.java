package dev.gdasync.gdsync.swnic.cudaipc;

import dev.gdasync.gdsync.swnic.core.DeviceMemory;

import dev.gdasync.gdsync.memory.Region;

import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The device regions of every software NIC of this process, by owner directory and region id. A NIC
 * whose peer is in the same process reaches the peer's device memory through this table: the device
 * pointer is valid here as it is, and CUDA IPC cannot open a process's own handles.
 */
public final class LocalDeviceRegions {
    private static final ConcurrentHashMap<String, Entry> REGIONS = new ConcurrentHashMap<>();

    /**
     * A device region of a NIC of this process.
     *
     * @param region the region (open until it closes)
     * @param device the ordinal of the device it is on
     */
    public record Entry(Region region, int device) implements DeviceMemory {
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

    private LocalDeviceRegions() {
    }

    public static void add(Path owner, long id, Region region, int device) {
        REGIONS.put(key(owner, id), new Entry(region, device));
    }

    public static void remove(Path owner, long id) {
        REGIONS.remove(key(owner, id));
    }

    /** @return the open region, or null if the owner has no such open device region */
    public static Entry find(Path owner, long id) {
        Entry e = REGIONS.get(key(owner, id));
        return e != null && e.region().isOpen() ? e : null;
    }

    private static String key(Path owner, long id) {
        return owner + "#" + id;
    }
}
