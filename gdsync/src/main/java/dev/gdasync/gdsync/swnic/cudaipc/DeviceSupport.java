package dev.gdasync.gdsync.swnic.cudaipc;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaCopyStream;
import dev.gdasync.gdsync.cuda.CudaDevice;
import dev.gdasync.gdsync.cuda.CudaIpc;

import java.lang.foreign.MemorySegment;

/**
 * A software NIC's CUDA state, made when it first meets device memory: its own reference to one
 * device's primary context, and a copy stream of its own on which its executors move bytes that touch
 * device memory. Copies are queued and waited for under {@link DeviceCopyLock} by the executing thread:
 * {@link #begin()}, {@link #copy} per piece, {@link #finish()}.
 */
public final class DeviceSupport implements AutoCloseable {
    private final CudaContext context;
    private final CudaCopyStream stream;

    private DeviceSupport(CudaContext context, CudaCopyStream stream) {
        this.context = context;
        this.stream = stream;
    }

    /**
     * Retains the device's primary context and creates the copy stream.
     *
     * @throws dev.gdasync.gdsync.cuda.CudaException if the driver refuses
     */
    public static DeviceSupport open(CudaDevice device) {
        CudaContext context = CudaContext.retainPrimary(device);
        try {
            return new DeviceSupport(context, CudaCopyStream.create(context));
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
    }

    public CudaContext context() {
        return context;
    }

    public CudaDevice device() {
        return context.device();
    }

    public long openIpc(byte[] handle) {
        return CudaIpc.open(context, handle);
    }

    public void closeIpc(long address) {
        CudaIpc.close(context, address);
    }

    /** Starts a series of copies on the calling thread. Caller holds {@link DeviceCopyLock#LOCK}. */
    public void begin() {
        stream.makeCurrent();
    }

    /**
     * Copies or queues one piece. A null segment means device memory, and its offset is then a device
     * address here; host to host is copied at once.
     */
    public void copy(MemorySegment srcSeg, long srcOff, MemorySegment dstSeg, long dstOff, long bytes) {
        if (srcSeg != null && dstSeg != null) {
            MemorySegment.copy(srcSeg, srcOff, dstSeg, dstOff, bytes);
        } else if (srcSeg != null) {
            stream.hostToDevice(dstOff, hostAddress(srcSeg, srcOff, bytes), bytes);
        } else if (dstSeg != null) {
            stream.deviceToHost(hostAddress(dstSeg, dstOff, bytes), srcOff, bytes);
        } else {
            stream.deviceToDevice(dstOff, srcOff, bytes);
        }
    }

    /** Waits for the queued copies. */
    public void finish() {
        stream.synchronize();
    }

    /** After a failed copy: waits for what was queued, ignoring errors, so nothing runs once the lock is released. */
    public void abort() {
        try {
            stream.synchronize();
        } catch (RuntimeException e) {
            // the first failure is the one reported
        }
    }

    private static long hostAddress(MemorySegment seg, long off, long bytes) {
        // Checks the bounds as an access would, then hands the raw address to the driver.
        return seg.asSlice(off, bytes).address();
    }

    /** Destroys the stream and releases the context reference. */
    @Override
    public void close() {
        try {
            stream.close();
        } finally {
            context.close();
        }
    }

    @Override
    public String toString() {
        return "CUDA copies of the software NIC on " + context.device();
    }
}
