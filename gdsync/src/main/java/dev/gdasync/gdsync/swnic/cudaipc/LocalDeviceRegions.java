package dev.gdasync.gdsync.swnic.cudaipc;


import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.swnic.core.OwnDeviceMemory;

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
     * @param memory the region as executors reach it (open until it closes)
     * @param device the ordinal of the device it is on
     */
    public record Entry(OwnDeviceMemory memory, int device) {
        /** @return the region */
        public Region region() {
            return memory.region();
        }
    }

    private LocalDeviceRegions() {
    }

    /**
     * @param owner  the owning NIC's process directory
     * @param id     the region's id
     * @param region the region
     * @param device the ordinal of its device
     */
    public static void add(Path owner, long id, Region region, int device) {
        REGIONS.put(key(owner, id), new Entry(new OwnDeviceMemory(region), device));
    }

    /**
     * @param owner the owning NIC's process directory
     * @param id    the region's id
     */
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
