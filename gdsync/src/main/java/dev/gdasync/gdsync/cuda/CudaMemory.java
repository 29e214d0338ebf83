package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.MemorySegment;

/**
 * Device memory through the driver: {@code cuMemAlloc}, {@code cuMemFree}, the synchronous copies and
 * {@code cuMemsetD8}. Every call makes its context current on the calling thread first and throws a
 * {@link CudaException} naming the call when the driver refuses. Addresses are raw device addresses;
 * host memory is a native {@link MemorySegment} (a heap segment has no address the driver could use).
 *
 * <p>{@link DeviceRegion} is the region form of an allocation; the software NIC's own copies run
 * asynchronously on a {@link CudaCopyStream}.
 */
public final class CudaMemory {
    private CudaMemory() {
    }

    /**
     * Allocates device memory ({@code cuMemAlloc}); its content is undefined.
     *
     * @param context the context to allocate in
     * @param bytes   how many bytes, {@code > 0}
     * @return the device address of the first byte
     * @throws IllegalArgumentException if {@code bytes} is not positive
     * @throws CudaException            if the driver refuses (out of memory, ...)
     */
    public static long allocate(CudaContext context, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("device allocation length must be > 0, got " + bytes);
        }
        context.makeCurrent();
        CUdeviceptr out = CudaPointers.deviceOut();
        CudaException.check(JCudaDriver.cuMemAlloc(out, bytes), "cuMemAlloc(" + bytes + " bytes on " + context.device() + ")");
        return CudaPointers.address(out);
    }

    /**
     * Frees device memory ({@code cuMemFree}).
     *
     * @param context the context it was allocated in
     * @param address the address {@link #allocate} returned
     * @throws CudaException if the driver refuses
     */
    public static void free(CudaContext context, long address) {
        context.makeCurrent();
        CudaException.check(JCudaDriver.cuMemFree(CudaPointers.device(address)), "cuMemFree(" + hex(address) + ")");
    }

    /**
     * Copies host memory to the device and waits for the copy ({@code cuMemcpyHtoD}).
     *
     * @param context the context
     * @param dst     the device address of the first byte written
     * @param src     native host memory; all of it is copied
     * @throws IllegalArgumentException if {@code src} is a heap segment
     * @throws CudaException            if the driver refuses
     */
    public static void copyHostToDevice(CudaContext context, long dst, MemorySegment src) {
        requireNative(src);
        context.makeCurrent();
        CudaException.check(JCudaDriver.cuMemcpyHtoD(CudaPointers.device(dst), CudaPointers.host(src.address()), src.byteSize()),
                "cuMemcpyHtoD(" + hex(dst) + ", " + src.byteSize() + " bytes)");
    }

    /**
     * Copies device memory to the host and waits for the copy ({@code cuMemcpyDtoH}).
     *
     * @param context the context
     * @param dst     native host memory; all of it is written
     * @param src     the device address of the first byte read
     * @throws IllegalArgumentException if {@code dst} is a heap segment
     * @throws CudaException            if the driver refuses
     */
    public static void copyDeviceToHost(CudaContext context, MemorySegment dst, long src) {
        requireNative(dst);
        context.makeCurrent();
        CudaException.check(JCudaDriver.cuMemcpyDtoH(CudaPointers.host(dst.address()), CudaPointers.device(src), dst.byteSize()),
                "cuMemcpyDtoH(" + hex(src) + ", " + dst.byteSize() + " bytes)");
    }

    /**
     * Copies device memory to device memory and waits for the copy ({@code cuMemcpyDtoD}).
     *
     * @param context the context
     * @param dst     the device address of the first byte written
     * @param src     the device address of the first byte read
     * @param bytes   how many bytes
     * @throws CudaException if the driver refuses
     */
    public static void copyDeviceToDevice(CudaContext context, long dst, long src, long bytes) {
        context.makeCurrent();
        CudaException.check(JCudaDriver.cuMemcpyDtoD(CudaPointers.device(dst), CudaPointers.device(src), bytes),
                "cuMemcpyDtoD(" + hex(dst) + ", " + hex(src) + ", " + bytes + " bytes)");
    }

    /**
     * Sets device memory to a byte value and waits ({@code cuMemsetD8}).
     *
     * @param context the context
     * @param dst     the device address of the first byte
     * @param bytes   how many bytes
     * @param value   the value
     * @throws CudaException if the driver refuses
     */
    public static void fill(CudaContext context, long dst, long bytes, byte value) {
        context.makeCurrent();
        CudaException.check(JCudaDriver.cuMemsetD8(CudaPointers.device(dst), value, bytes),
                "cuMemsetD8(" + hex(dst) + ", " + bytes + " bytes)");
    }

    static void requireNative(MemorySegment s) {
        if (!s.isNative()) {
            throw new IllegalArgumentException("CUDA copies need native host memory, not a heap segment: " + s);
        }
    }

    static String hex(long address) {
        return "0x" + Long.toHexString(address);
    }
}
