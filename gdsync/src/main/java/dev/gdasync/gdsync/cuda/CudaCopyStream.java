package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * A non-blocking CUDA stream of its own for asynchronous copies: queue any number with
 * {@link #hostToDevice}, {@link #deviceToHost} and {@link #deviceToDevice}, then {@link #synchronize()}.
 * Being non-blocking, it does not wait for work on the legacy default stream, nor that for it.
 *
 * <p>Not thread-safe: one thread queues and synchronizes at a time (the software NIC holds a lock).
 * Every call makes the stream's context current on the calling thread, so any thread may be that one.
 * Host memory given by address must stay mapped until {@link #synchronize()} returned.
 */
public final class CudaCopyStream implements AutoCloseable {
    private final CudaContext context;
    private final CUstream stream;
    private boolean closed;

    private CudaCopyStream(CudaContext context, CUstream stream) {
        this.context = context;
        this.stream = stream;
    }

    /**
     * Creates a non-blocking stream ({@code cuStreamCreate} with {@code CU_STREAM_NON_BLOCKING}).
     *
     * @param context the context the stream belongs to
     * @return the stream
     * @throws CudaException if the driver refuses
     */
    public static CudaCopyStream create(CudaContext context) {
        context.makeCurrent();
        CUstream stream = new CUstream();
        CudaException.check(JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING),
                "cuStreamCreate(CU_STREAM_NON_BLOCKING on " + context.device() + ")");
        return new CudaCopyStream(context, stream);
    }

    /** @return the context of the stream */
    public CudaContext context() {
        return context;
    }

    /**
     * Makes the stream's context current on the calling thread: call it once before a series of queued
     * copies (the copies themselves do not, to keep a series cheap).
     */
    public void makeCurrent() {
        context.makeCurrent();
    }

    /**
     * Queues a host-to-device copy ({@code cuMemcpyHtoDAsync}).
     *
     * @param dst     device address
     * @param srcHost host address
     * @param bytes   length
     * @throws CudaException if the driver refuses
     */
    public void hostToDevice(long dst, long srcHost, long bytes) {
        CudaException.check(JCudaDriver.cuMemcpyHtoDAsync(CudaPointers.device(dst), CudaPointers.host(srcHost), bytes, stream),
                "cuMemcpyHtoDAsync(" + CudaMemory.hex(dst) + ", " + CudaMemory.hex(srcHost) + ", " + bytes + " bytes)");
    }

    /**
     * Queues a device-to-host copy ({@code cuMemcpyDtoHAsync}).
     *
     * @param dstHost host address
     * @param src     device address
     * @param bytes   length
     * @throws CudaException if the driver refuses
     */
    public void deviceToHost(long dstHost, long src, long bytes) {
        CudaException.check(JCudaDriver.cuMemcpyDtoHAsync(CudaPointers.host(dstHost), CudaPointers.device(src), bytes, stream),
                "cuMemcpyDtoHAsync(" + CudaMemory.hex(dstHost) + ", " + CudaMemory.hex(src) + ", " + bytes + " bytes)");
    }

    /**
     * Queues a device-to-device copy ({@code cuMemcpyDtoDAsync}).
     *
     * @param dst   device address
     * @param src   device address
     * @param bytes length
     * @throws CudaException if the driver refuses
     */
    public void deviceToDevice(long dst, long src, long bytes) {
        CudaException.check(JCudaDriver.cuMemcpyDtoDAsync(CudaPointers.device(dst), CudaPointers.device(src), bytes, stream),
                "cuMemcpyDtoDAsync(" + CudaMemory.hex(dst) + ", " + CudaMemory.hex(src) + ", " + bytes + " bytes)");
    }

    /**
     * Waits until every queued copy has ended ({@code cuStreamSynchronize}).
     *
     * @throws CudaException if a copy failed
     */
    public void synchronize() {
        CudaException.check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize(copy stream of " + context.device() + ")");
    }

    /** Waits for queued copies, ignoring their result, and destroys the stream (once). */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        context.makeCurrent();
        JCudaDriver.cuStreamSynchronize(stream);
        CudaException.check(JCudaDriver.cuStreamDestroy(stream), "cuStreamDestroy(copy stream of " + context.device() + ")");
    }

    @Override
    public String toString() {
        return "copy stream of " + context.device();
    }
}
