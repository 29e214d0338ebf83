package dev.gdasync.gdsync.swnic.cudaipc;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDevice;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.gdsync.cuda.DeviceRegion;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.swnic.core.Layouts;
import dev.gdasync.gdsync.swnic.core.NicCore;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A software NIC's device memory: the GPU it uses ({@link DeviceSupport}, bound once), the device
 * regions it allocated and published, and their retirement. Made when the NIC first meets device memory,
 * so a NIC that only ever uses host memory never loads the CUDA binding.
 *
 * <p>One NIC serves one GPU: its first device allocation binds it to that allocation's device, and a
 * NIC that only maps peers' device memory binds to the peer's device ordinal when this process sees
 * it, else to device 0.
 */
public final class NicDevices implements AutoCloseable {
    public static final System.Logger LOG = System.getLogger("dev.gdasync.gdsync.swnic");
    /** How long a closing device region waits for peers to unmap it before freeing it anyway. */
    public static final Duration IMPORTER_WAIT = Duration.ofSeconds(10);

    private final NicCore nic;
    private final Object bindLock = new Object();
    private volatile DeviceSupport support;
    private final List<DeviceRegion> regions = new ArrayList<>();
    private volatile boolean closed;

    /**
     * Device memory state of a NIC; loads nothing until the NIC first meets device memory.
     *
     * @param nic the NIC
     */
    public NicDevices(NicCore nic) {
        this.nic = nic;
    }

    /** @return the bound CUDA state, or null before the first binding */
    public DeviceSupport current() {
        return support;
    }

    /**
     * Binds the NIC to a device, or checks it is bound to that one.
     *
     * @throws IllegalArgumentException if it is bound to another device
     */
    public DeviceSupport bind(CudaDevice device) {
        synchronized (bindLock) {
            DeviceSupport s = support;
            if (s == null) {
                if (closed) {
                    throw new IllegalStateException(nic.name() + " is closed");
                }
                s = DeviceSupport.open(device);
                support = s;
            } else if (s.device().ordinal() != device.ordinal()) {
                throw new IllegalArgumentException(nic.name() + " uses GPU memory of " + s.device() + "; one software NIC"
                        + " serves one GPU: open another NIC for " + device);
            }
            return s;
        }
    }

    /**
     * The CUDA state for mapping a peer's device memory: the bound one, else a binding to the peer's device
     * ordinal when this process sees such a device, else to device 0.
     *
     * @throws CudaException if CUDA cannot be used in this process
     */
    public DeviceSupport bindForPeer(int peerOrdinal) {
        DeviceSupport s = support;
        if (s != null) {
            return s;
        }
        synchronized (bindLock) {
            if (support != null) {
                return support;
            }
            CudaDriver driver = CudaDriver.open();
            int ordinal = peerOrdinal >= 0 && peerOrdinal < driver.devices().size() ? peerOrdinal : 0;
            return bind(driver.device(ordinal));
        }
    }

    /**
     * Allocates a device region and publishes its IPC handle in {@code device-<id>}.
     *
     * @see #allocate(int, long)
     */
    public DeviceRegion allocate(CudaContext context, long bytes) {
        return allocate(context.device(), bytes);
    }

    /**
     * Allocates a device region on the GPU with this ordinal.
     *
     * @throws IllegalArgumentException if no GPU has that ordinal
     */
    public DeviceRegion allocate(int ordinal, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("region length must be > 0, got " + bytes);
        }
        CudaDriver driver = CudaDriver.open();
        if (ordinal < 0 || ordinal >= driver.devices().size()) {
            throw new IllegalArgumentException("no GPU has ordinal " + ordinal + ": this process sees "
                    + driver.devices().size() + " (check CUDA_VISIBLE_DEVICES)");
        }
        return allocate(driver.device(ordinal), bytes);
    }

    private DeviceRegion allocate(CudaDevice device, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("region length must be > 0, got " + bytes);
        }
        DeviceSupport s = bind(device);
        ShmDirectory directory = nic.directory();
        long id = directory.reserveRegionId();
        int ordinal = s.device().ordinal();
        DeviceRegion region = DeviceRegion.allocate(s.context(), id, bytes);
        byte[] handle = new byte[Layouts.Device.HANDLE_BYTES];
        int handleResult = 0;
        try {
            handle = region.ipcHandle();
        } catch (CudaException e) {
            // The region still works in this process; peers in others get DEVICE_UNREACHABLE.
            handleResult = e.result() == 0 ? CudaException.NO_RESULT : e.result();
            LOG.log(System.Logger.Level.WARNING, "device region " + id + " of " + nic.name()
                    + " cannot be shared with other processes: " + e.getMessage());
        }
        Arena arena = Arena.ofShared();
        MemorySegment file;
        try {
            file = DeviceHandleFile.create(directory, arena, id, ordinal, bytes, region.address(), handle, handleResult);
        } catch (RuntimeException e) {
            arena.close();
            region.close();
            throw e;
        }
        LocalDeviceRegions.add(directory.processDirectory(), id, region, ordinal);
        region.addCloseListener(() -> retire(region, file, arena));
        synchronized (this) {
            if (!closed) {
                regions.add(region);
                return region;
            }
        }
        region.close();
        throw new IllegalStateException(nic.name() + " is closed");
    }

    public synchronized boolean owns(Region region) {
        for (DeviceRegion r : regions) {
            if (r == region) {
                return true;
            }
        }
        return false;
    }

    /**
     * Retires a closing region before its memory is freed: its keys stop working, peers unmap it (or are
     * dead), copies in progress end, its handle file goes.
     */
    private void retire(DeviceRegion region, MemorySegment file, Arena arena) {
        ShmDirectory directory = nic.directory();
        LocalDeviceRegions.remove(directory.processDirectory(), region.id());
        nic.mrTable().deregisterAll(region);
        DeviceHandleFile.markClosing(file);
        String holders = DeviceHandleFile.awaitImporters(file, IMPORTER_WAIT);
        if (holders != null) {
            LOG.log(System.Logger.Level.WARNING, region + " of " + nic.name() + " is freed although " + holders
                    + " did not unmap it within " + IMPORTER_WAIT.toSeconds() + " s");
        }
        DeviceCopyLock.quiesce();
        arena.close();
        try {
            Files.deleteIfExists(directory.file(Layouts.Device.fileName(region.id())));
        } catch (IOException e) {
            // the directory goes when the NIC closes
        }
        synchronized (this) {
            regions.remove(region);
        }
    }

    /** Closes (retires and frees) every device region; later allocations are refused. */
    public void closeRegions() {
        List<DeviceRegion> toClose;
        synchronized (this) {
            closed = true;
            toClose = new ArrayList<>(regions);
        }
        for (DeviceRegion r : toClose) {
            try {
                r.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing " + r + " of " + nic.name() + " failed: " + e.getMessage());
            }
        }
    }

    /** Destroys the copy stream and releases the context; after {@link #closeRegions()}. */
    @Override
    public void close() {
        DeviceSupport s;
        synchronized (bindLock) {
            closed = true;
            s = support;
            support = null;
        }
        if (s != null) {
            try {
                s.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "releasing the CUDA state of " + nic.name() + " failed: " + e.getMessage());
            }
        }
    }
}
