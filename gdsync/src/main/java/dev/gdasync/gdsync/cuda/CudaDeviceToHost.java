package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.MemorySegment;

/**
 * Small synchronous copies from device memory into host memory, for readers that poll device words without
 * GDRCopy ({@code dev.gdasync.gdsync.gdrcopy.GpuWords}).
 *
 * <p>Each copy is {@code cuMemcpyDtoHAsync} on a non-blocking stream of its own, followed by
 * {@code cuStreamSynchronize}. A plain {@code cuMemcpyDtoH} runs on the legacy default stream, which waits
 * for the work of every blocking stream of the context: polling a word that a still-running kernel will
 * write would then wait for that kernel to end. A non-blocking stream waits for nothing but its own copies.
 *
 * <p>Copies are serialized on this object; each makes the context current on the calling thread first.
 */
public final class CudaDeviceToHost implements AutoCloseable {
    private final CudaContext context;
    private final CUstream stream;
    private boolean closed;

    private CudaDeviceToHost(CudaContext context, CUstream stream) {
        this.context = context;
        this.stream = stream;
    }

    /**
     * Creates the copier and its non-blocking stream.
     *
     * @param context the context the device memory belongs to
     * @return the copier
     * @throws CudaException if the stream cannot be created
     */
    public static CudaDeviceToHost open(CudaContext context) {
        context.makeCurrent();
        CUstream stream = new CUstream();
        CudaException.check(JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING),
                "cuStreamCreate(CU_STREAM_NON_BLOCKING)");
        return new CudaDeviceToHost(context, stream);
    }

    /**
     * Copies {@code destination.byteSize()} bytes from device memory and waits until they have arrived.
     *
     * @param deviceAddress the first device byte
     * @param destination   native host memory to fill
     * @throws IllegalArgumentException if the destination is not native memory
     * @throws IllegalStateException    if the copier was closed
     * @throws CudaException            if the driver refuses (an address that is not device memory, a
     *                                  context in error after a failed kernel, ...)
     */
    public synchronized void copy(long deviceAddress, MemorySegment destination) {
        if (!destination.isNative()) {
            throw new IllegalArgumentException("device-to-host copies need native host memory, got a heap segment");
        }
        if (closed) {
            throw new IllegalStateException("the device-to-host copier of " + context + " is closed");
        }
        context.makeCurrent();
        long bytes = destination.byteSize();
        String call = "cuMemcpyDtoHAsync(0x" + Long.toHexString(destination.address()) + " <- device 0x"
                + Long.toHexString(deviceAddress) + ", " + bytes + " bytes)";
        CudaException.check(JCudaDriver.cuMemcpyDtoHAsync(CudaPointers.host(destination.address()), device(deviceAddress),
                bytes, stream), call);
        CudaException.check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize after " + call);
    }

    /** A device pointer holding a raw address, through JCuda's public offset method. */
    private static CUdeviceptr device(long address) {
        return new CUdeviceptr().withByteOffset(address);
    }

    /** Destroys the stream (once). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        context.makeCurrent();
        CudaException.check(JCudaDriver.cuStreamDestroy(stream), "cuStreamDestroy");
    }
}
