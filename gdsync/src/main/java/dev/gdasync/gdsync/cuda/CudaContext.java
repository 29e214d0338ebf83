package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUcontext;
import jcuda.driver.JCudaDriver;

/**
 * A retained reference to a device's primary context: the context the CUDA runtime and other libraries of
 * the process share. Every thread that calls the driver for this device makes it current first
 * ({@link #makeCurrent()}); {@link #close()} gives the reference back.
 */
public final class CudaContext implements AutoCloseable {
    private final CudaDevice device;
    private final CUcontext handle;
    private boolean closed;

    private CudaContext(CudaDevice device, CUcontext handle) {
        this.device = device;
        this.handle = handle;
    }

    /**
     * Retains the device's primary context and makes it current on the calling thread.
     *
     * @param device the device
     * @return the context
     * @throws CudaException if the driver refuses
     */
    public static CudaContext retainPrimary(CudaDevice device) {
        CudaDriver.open();
        CUcontext handle = new CUcontext();
        CudaException.check(JCudaDriver.cuDevicePrimaryCtxRetain(handle, device.handle()),
                "cuDevicePrimaryCtxRetain(device " + device.ordinal() + ")");
        CudaContext context = new CudaContext(device, handle);
        try {
            context.makeCurrent();
        } catch (CudaException e) {
            context.close();
            throw e;
        }
        return context;
    }

    /**
     * Makes this context current on the calling thread (cheap: call it before driver calls on any thread).
     *
     * @throws IllegalStateException if the context was closed
     * @throws CudaException         if the driver refuses
     */
    public void makeCurrent() {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the CUDA context of " + device + " is closed");
            }
        }
        CudaException.check(JCudaDriver.cuCtxSetCurrent(handle), "cuCtxSetCurrent(device " + device.ordinal() + ")");
    }

    /** @return the device */
    public CudaDevice device() {
        return device;
    }

    /** @return the driver's handle */
    public CUcontext handle() {
        return handle;
    }

    /** Releases the primary context reference (once). */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        CudaException.check(JCudaDriver.cuDevicePrimaryCtxRelease(device.handle()),
                "cuDevicePrimaryCtxRelease(device " + device.ordinal() + ")");
    }

    @Override
    public String toString() {
        return "primary context of " + device;
    }
}
