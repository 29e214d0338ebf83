package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * Host memory registered with CUDA ({@code cuMemHostRegister}): page-locked and mapped into the device's
 * address space, so kernels and stream memops can load and store it through the device pointer
 * {@code cuMemHostGetDevicePointer} gives. The registration is PORTABLE (valid in every context) and
 * DEVICEMAP; {@link #registerIo} adds IOMEMORY, for memory that is a device's I/O page (a NIC's doorbell
 * page), which a GPU can then write to directly (GPUDirect RDMA).
 */
public final class CudaHostMemory implements AutoCloseable {
    /** {@code CU_MEMHOSTREGISTER_PORTABLE}. */
    public static final int PORTABLE = JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE;
    /** {@code CU_MEMHOSTREGISTER_DEVICEMAP}. */
    public static final int DEVICEMAP = JCudaDriver.CU_MEMHOSTREGISTER_DEVICEMAP;
    /** {@code CU_MEMHOSTREGISTER_IOMEMORY}. */
    public static final int IOMEMORY = JCudaDriver.CU_MEMHOSTREGISTER_IOMEMORY;

    private final CudaContext context;
    private final long hostAddress;
    private final long bytes;
    private final long deviceAddress;
    private final boolean io;
    private boolean closed;

    private CudaHostMemory(CudaContext context, long hostAddress, long bytes, long deviceAddress, boolean io) {
        this.context = context;
        this.hostAddress = hostAddress;
        this.bytes = bytes;
        this.deviceAddress = deviceAddress;
        this.io = io;
    }

    /**
     * Registers ordinary host memory (PORTABLE | DEVICEMAP).
     *
     * @param context     the context to register in (made current on this thread)
     * @param hostAddress the first byte
     * @param bytes       how many bytes
     * @return the registration
     * @throws IllegalArgumentException if the range is empty or wraps around
     * @throws CudaException            if the driver refuses (already registered, out of pinned memory, ...)
     */
    public static CudaHostMemory register(CudaContext context, long hostAddress, long bytes) {
        return register(context, hostAddress, bytes, false);
    }

    /**
     * Registers a device's I/O memory, such as a NIC's doorbell page (PORTABLE | DEVICEMAP | IOMEMORY).
     *
     * @param context     the context to register in (made current on this thread)
     * @param hostAddress the first byte, as mapped into this process
     * @param bytes       how many bytes
     * @return the registration
     * @throws CudaException if the driver refuses (IOMEMORY needs GPUDirect RDMA support)
     */
    public static CudaHostMemory registerIo(CudaContext context, long hostAddress, long bytes) {
        return register(context, hostAddress, bytes, true);
    }

    private static CudaHostMemory register(CudaContext context, long hostAddress, long bytes, boolean io) {
        if (bytes <= 0 || hostAddress == 0 || hostAddress + bytes < hostAddress) {
            throw new IllegalArgumentException("cannot register " + bytes + " bytes at 0x" + Long.toHexString(hostAddress)
                    + " with CUDA: give a non-null address and a positive size");
        }
        context.makeCurrent();
        int flags = PORTABLE | DEVICEMAP | (io ? IOMEMORY : 0);
        String range = rangeName(hostAddress, bytes, io);
        CudaException.check(JCudaDriver.cuMemHostRegister(CudaPointers.host(hostAddress), bytes, flags),
                "cuMemHostRegister(" + range + ")");
        CUdeviceptr device = CudaPointers.deviceOut();
        int rc = JCudaDriver.cuMemHostGetDevicePointer(device, CudaPointers.host(hostAddress), 0);
        if (rc != CudaResults.SUCCESS) {
            JCudaDriver.cuMemHostUnregister(CudaPointers.host(hostAddress));
            throw CudaException.of(rc, "cuMemHostGetDevicePointer(" + range + ")");
        }
        return new CudaHostMemory(context, hostAddress, bytes, CudaPointers.address(device), io);
    }

    private static String rangeName(long hostAddress, long bytes, boolean io) {
        return "0x" + Long.toHexString(hostAddress) + ", " + bytes + " bytes" + (io ? ", IOMEMORY" : "");
    }

    /** @return the first registered byte's host address */
    public long hostAddress() {
        return hostAddress;
    }

    /** @return registered bytes */
    public long byteSize() {
        return bytes;
    }

    /** @return the device address of the first byte */
    public long deviceAddress() {
        return deviceAddress;
    }

    /** @return whether this is I/O memory (IOMEMORY) */
    public boolean isIo() {
        return io;
    }

    /**
     * @param address a host address inside the registration
     * @return its device address
     * @throws IllegalArgumentException if the address is outside
     */
    public long deviceAddressOf(long address) {
        if (address < hostAddress || address - hostAddress >= bytes) {
            throw new IllegalArgumentException("0x" + Long.toHexString(address) + " is outside " + this);
        }
        return deviceAddress + (address - hostAddress);
    }

    /** Unregisters the memory (once); the memory itself stays the owner's. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        context.makeCurrent();
        CudaException.check(JCudaDriver.cuMemHostUnregister(CudaPointers.host(hostAddress)),
                "cuMemHostUnregister(" + rangeName(hostAddress, bytes, io) + ")");
    }

    @Override
    public String toString() {
        return "CUDA-registered host memory [" + rangeName(hostAddress, bytes, io) + "] at device 0x"
                + Long.toHexString(deviceAddress);
    }
}
