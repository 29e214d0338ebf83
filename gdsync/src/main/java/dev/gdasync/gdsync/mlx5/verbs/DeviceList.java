package dev.gdasync.gdsync.mlx5.verbs;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The RDMA devices {@code ibv_get_device_list} reports, held until {@link #close()} frees the list, and the choice of
 * one: by name, or the first the mlx5 provider serves. A device chosen here may be opened before the list is freed;
 * its context stays valid afterwards.
 */
@SuppressWarnings("restricted") // the list and the names are native memory the library hands out
final class DeviceList implements AutoCloseable {
    /** Where the kernel lists its RDMA devices. */
    static final Path SYSFS_DEVICES = Path.of("/sys/class/infiniband");
    /** The question every "no device" message ends with. */
    static final String LOADED = "is a ConnectX NIC with mlx5_core and mlx5_ib loaded?";
    /** {@code IBV_SYSFS_NAME_MAX}: a device name's buffer in {@code struct ibv_device}. */
    static final int NAME_MAX = 64;

    private final VerbsLibrary lib;
    private final MemorySegment list;
    private final List<MemorySegment> devices;
    private final List<String> names;

    private DeviceList(VerbsLibrary lib, MemorySegment list, List<MemorySegment> devices, List<String> names) {
        this.lib = lib;
        this.list = list;
        this.devices = devices;
        this.names = names;
    }

    /**
     * @param lib the library
     * @return the devices
     * @throws VerbsException if there is none; the message says what the kernel shows and what to check
     */
    static DeviceList get(VerbsLibrary lib) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment list = lib.getDeviceList(errno, count);
            if (list.equals(MemorySegment.NULL)) {
                int e = VerbsLibrary.errno(errno);
                throw new VerbsException("ibv_get_device_list", e, "no RDMA device: ibv_get_device_list found none (it "
                        + "failed with errno " + e + ", " + Errno.describe(e) + (e == Errno.ENOSYS ? ": the kernel offers "
                        + "no RDMA verbs" : "") + "; " + describeSysfs(SYSFS_DEVICES) + "; " + LOADED + ")");
            }
            int n = count.get(JAVA_INT, 0);
            if (n <= 0) {
                lib.freeDeviceList(list);
                throw new VerbsException("ibv_get_device_list", 0, "no RDMA device: ibv_get_device_list found none ("
                        + describeSysfs(SYSFS_DEVICES) + "; " + LOADED + ")");
            }
            MemorySegment array = list.reinterpret(ADDRESS.byteSize() * n);
            List<MemorySegment> devices = new ArrayList<>(n);
            List<String> names = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                MemorySegment device = array.getAtIndex(ADDRESS, i);
                devices.add(device);
                names.add(lib.getDeviceName(device).reinterpret(NAME_MAX).getString(0));
            }
            return new DeviceList(lib, list, devices, names);
        }
    }

    /**
     * @param dir the kernel's RDMA device folder
     * @return what it shows, for a "no device" message
     */
    static String describeSysfs(Path dir) {
        if (!Files.isDirectory(dir)) {
            return dir + " does not exist: the kernel has no RDMA device";
        }
        List<String> entries = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.forEach(p -> entries.add(p.getFileName().toString()));
        } catch (IOException e) {
            return dir + " cannot be read (" + e.getMessage() + ")";
        }
        if (entries.isEmpty()) {
            return dir + " is empty";
        }
        entries.sort(null);
        return dir + " lists " + String.join(", ", entries) + ", but verbs cannot use them: is ib_uverbs loaded, and "
                + "is /dev/infiniband reachable (a container needs --device /dev/infiniband)?";
    }

    /** @return the devices' names, in the library's order */
    List<String> names() {
        return List.copyOf(names);
    }

    /**
     * @param name a device's name, or null for the first mlx5 device
     * @return the index of the device
     * @throws VerbsException if there is no such device, or it is not an mlx5 device; the message lists the devices
     */
    int choose(String name) {
        if (name == null) {
            for (int i = 0; i < devices.size(); i++) {
                if (lib.isMlx5(devices.get(i))) {
                    return i;
                }
            }
            throw new VerbsException("ibv_get_device_list", 0, "no mlx5 device: ibv_get_device_list found "
                    + String.join(", ", names) + ", none of them served by rdma-core's mlx5 provider (mlx5dv_is_supported "
                    + "is false for each); " + LOADED);
        }
        int i = names.indexOf(name);
        if (i < 0) {
            throw new VerbsException("ibv_get_device_list", 0, "no RDMA device named " + name
                    + ": ibv_get_device_list found " + String.join(", ", names));
        }
        if (!lib.isMlx5(devices.get(i))) {
            throw new VerbsException("mlx5dv_is_supported", 0, name + " is not an mlx5 device: rdma-core's mlx5 provider "
                    + "does not serve it (mlx5dv_is_supported is false); the devices found are " + String.join(", ", names));
        }
        return i;
    }

    /** @return the device at an index */
    MemorySegment device(int index) {
        return devices.get(index);
    }

    /** @return the name of the device at an index */
    String name(int index) {
        return names.get(index);
    }

    /** Frees the list; contexts opened from it stay valid. */
    @Override
    public void close() {
        lib.freeDeviceList(list);
    }
}
