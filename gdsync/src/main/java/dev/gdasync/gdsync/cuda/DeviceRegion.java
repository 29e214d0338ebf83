package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link RegionKind#DEVICE} region: GPU memory from {@code cuMemAlloc}. Its {@link #address()} is the
 * device pointer; the host cannot load or store it, so it has no host segment: {@link #segment()}
 * throws. Bytes move in and out with {@link #copyFromHost}, {@link #copyToHost} and {@link #fill}
 * (synchronous driver copies), or through a NIC that registered it.
 *
 * <p>Users allocate device regions through their NIC ({@code SoftwareNic.allocateDevice}), which
 * publishes the region to its peers and frees it when it closes; {@link #allocate} is the building
 * block for providers. The memory is zero-filled when allocated.
 */
public final class DeviceRegion implements Region {
    private final CudaContext context;
    private final long id;
    private final long address;
    private final long length;
    private final List<Runnable> closeListeners = new CopyOnWriteArrayList<>();
    private volatile boolean open = true;

    private DeviceRegion(CudaContext context, long id, long address, long length) {
        this.context = context;
        this.id = id;
        this.address = address;
        this.length = length;
    }

    /**
     * Allocates zero-filled device memory as a region ({@code cuMemAlloc}, {@code cuMemsetD8}).
     *
     * @param context the context to allocate in; it must stay open until the region is closed
     * @param id      the region's id, unique among its owner's regions
     * @param bytes   the length, {@code > 0}
     * @return the region
     * @throws IllegalArgumentException if the length is not positive
     * @throws CudaException            if the driver refuses
     */
    public static DeviceRegion allocate(CudaContext context, long id, long bytes) {
        long address = CudaMemory.allocate(context, bytes);
        try {
            CudaMemory.fill(context, address, bytes, (byte) 0);
        } catch (RuntimeException e) {
            CudaMemory.free(context, address);
            throw e;
        }
        return new DeviceRegion(context, id, address, bytes);
    }

    /**
     * The CUDA view of a device region that a NIC handed out as a plain {@link Region} (libmp's
     * {@code Mp.allocateDevice}, which knows nothing of CUDA).
     *
     * @param region a region
     * @return the region as device memory
     * @throws IllegalArgumentException if it is not device memory made by this layer
     */
    public static DeviceRegion of(Region region) {
        if (region instanceof DeviceRegion d) {
            return d;
        }
        throw new IllegalArgumentException(region + " is not GPU memory from the CUDA layer (its kind is "
                + region.kind() + ")");
    }

    @Override
    public RegionKind kind() {
        return RegionKind.DEVICE;
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public long length() {
        return length;
    }

    /**
     * Device memory has no host segment.
     *
     * @throws UnsupportedOperationException always, naming the region and what to use instead
     */
    @Override
    public MemorySegment segment() {
        throw new UnsupportedOperationException(this + " is GPU memory: the host cannot load or store it; move bytes with "
                + "copyFromHost/copyToHost, or let a NIC that registered it move them");
    }

    /** @return the device pointer of the first byte */
    @Override
    public long address() {
        return address;
    }

    /**
     * A range of the region as a segment that carries only its device address and length, for calls that
     * take buffers as segments and use nothing but their address and size: the sends, receives and puts of
     * {@code dev.gdasync.libmp.Mp}, which the NIC executes with device copies (LibMP's {@code void *} buffers,
     * which may be device pointers). The CPU must never read or write it: the address is not host memory,
     * and an access crashes the process.
     *
     * @param offset the range's first byte in the region
     * @param length its length
     * @return the address-only segment
     * @throws IndexOutOfBoundsException if the range is not inside the region
     * @throws IllegalStateException     if the region is closed
     */
    @SuppressWarnings("restricted") // a segment over an address the JVM did not allocate: by design, see above
    public MemorySegment pointer(long offset, long length) {
        checkRange(offset, length);
        return MemorySegment.ofAddress(address + offset).reinterpret(length);
    }

    /** @return the context the memory was allocated in */
    public CudaContext context() {
        return context;
    }

    /** @return the device the memory is on */
    public CudaDevice device() {
        return context.device();
    }

    /**
     * Gets the region's CUDA IPC handle, with which another process of the node maps it.
     *
     * @return the {@value CudaIpc#HANDLE_BYTES} bytes of the handle
     * @throws IllegalStateException if the region is closed
     * @throws CudaException         if the driver refuses
     */
    public byte[] ipcHandle() {
        requireOpen();
        return CudaIpc.handleOf(context, address);
    }

    /**
     * Copies host memory into the region and waits for the copy.
     *
     * @param offset where in the region the first byte goes
     * @param src    native host memory; all of it is copied
     * @throws IndexOutOfBoundsException if the range is not inside the region
     * @throws IllegalStateException     if the region is closed
     * @throws CudaException             if the driver refuses
     */
    public void copyFromHost(long offset, MemorySegment src) {
        checkRange(offset, src.byteSize());
        CudaMemory.copyHostToDevice(context, address + offset, src);
    }

    /**
     * Copies bytes of the region to host memory and waits for the copy.
     *
     * @param offset where in the region the first byte comes from
     * @param dst    native host memory; all of it is written
     * @throws IndexOutOfBoundsException if the range is not inside the region
     * @throws IllegalStateException     if the region is closed
     * @throws CudaException             if the driver refuses
     */
    public void copyToHost(long offset, MemorySegment dst) {
        checkRange(offset, dst.byteSize());
        CudaMemory.copyDeviceToHost(context, dst, address + offset);
    }

    /**
     * Sets a range of the region to a byte value and waits.
     *
     * @param offset first byte
     * @param bytes  how many
     * @param value  the value
     * @throws IndexOutOfBoundsException if the range is not inside the region
     * @throws IllegalStateException     if the region is closed
     * @throws CudaException             if the driver refuses
     */
    public void fill(long offset, long bytes, byte value) {
        checkRange(offset, bytes);
        CudaMemory.fill(context, address + offset, bytes, value);
    }

    private void checkRange(long offset, long bytes) {
        requireOpen();
        if (offset < 0 || bytes < 0 || offset > length - bytes) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + bytes + ") is not inside " + this);
        }
    }

    private void requireOpen() {
        if (!open) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    /**
     * Adds an action run when the region closes, before the memory is freed (a NIC deregisters it there
     * and waits until no copy and no peer uses it).
     *
     * @param listener the action
     */
    public void addCloseListener(Runnable listener) {
        closeListeners.add(listener);
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /** Runs the close listeners, then frees the memory ({@code cuMemFree}). Closing twice does nothing. */
    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        try {
            for (Runnable r : closeListeners) {
                r.run();
            }
        } finally {
            CudaMemory.free(context, address);
        }
    }

    @Override
    public String toString() {
        return "DeviceRegion{id=" + id + ", bytes=" + length + ", address=0x" + Long.toHexString(address) + ", device "
                + context.device().ordinal() + "}";
    }
}
