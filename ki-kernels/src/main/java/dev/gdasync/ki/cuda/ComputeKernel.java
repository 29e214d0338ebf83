package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.gdsync.cuda.CudaResults;
import dev.gdasync.gdsync.cuda.CudaStream;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.kernels.KiKernels;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * The emulated compute kernel {@code gds_compute_spin} of the packaged kernels, loaded into one context and
 * launched on {@link CudaStream}s: a kernel of a chosen length in stream order, as the GPU ping-pong and
 * LibMP's benchmarks use to stand for the application's own kernels.
 */
public final class ComputeKernel implements AutoCloseable {
    private final CudaContext context;
    private final CUmodule module;
    private final CUfunction function;
    private boolean closed;

    private ComputeKernel(CudaContext context, CUmodule module, CUfunction function) {
        this.context = context;
        this.module = module;
        this.function = function;
    }

    /**
     * Loads the packaged kernels into a context (the cubin for the GPU, else the PTX) and finds the kernel.
     *
     * @param context the context whose streams will run it
     * @return the kernel
     * @throws IllegalStateException if this build packaged no kernels (built without nvcc)
     * @throws KiException           if no packaged image runs on the GPU, or the module does not load
     * @throws CudaException if the driver refuses otherwise
     */
    public static ComputeKernel load(CudaContext context) {
        if (!KiKernels.available()) {
            throw new IllegalStateException("the CUDA kernels were not built into this ki-kernels jar (nvcc was missing "
                    + "when it was built): rebuild it on a machine with the CUDA toolkit");
        }
        ModuleImage image;
        try {
            image = ImageChoice.choose(KernelImages.packaged(ComputeKernel.class.getClassLoader()),
                    context.device().computeMajor(), context.device().computeMinor());
        } catch (IllegalStateException e) {
            throw new KiException("the kernels cannot run on " + context.device() + ": " + e.getMessage(), e);
        }
        context.makeCurrent();
        CUmodule module = new CUmodule();
        int rc = image.kind() == ModuleImage.Kind.CUBIN ? JCudaDriver.cuModuleLoadData(module, image.bytes())
                : JCudaDriver.cuModuleLoadData(module, image.text());
        if (rc != CudaResults.SUCCESS) {
            throw new KiException("the kernels did not load on " + context.device() + ": "
                    + CudaResults.describe(rc, "cuModuleLoadData(" + image.description() + ")"),
                    CudaException.of(rc, "cuModuleLoadData"));
        }
        CUfunction function = new CUfunction();
        rc = JCudaDriver.cuModuleGetFunction(function, module, KiKernels.COMPUTE_SPIN);
        if (rc != CudaResults.SUCCESS) {
            JCudaDriver.cuModuleUnload(module);
            throw new KiException("the kernel module (" + image.description() + ") has no " + KiKernels.COMPUTE_SPIN
                    + ": rebuild ki-kernels", CudaException.of(rc, "cuModuleGetFunction"));
        }
        return new ComputeKernel(context, module, function);
    }

    /**
     * Queues the kernel on a stream: one thread that busy waits.
     *
     * @param stream a stream of this kernel's context
     * @param nanos  how long the kernel runs, {@code >= 0} (0: an empty kernel)
     * @throws IllegalArgumentException if {@code nanos} is negative or the stream is of another context
     * @throws IllegalStateException    if the kernel is closed
     */
    public void launch(CudaStream stream, long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("a compute kernel of " + nanos + " ns: the length must not be negative");
        }
        if (stream.context().device().ordinal() != context.device().ordinal()) {
            throw new IllegalArgumentException(stream + " is on " + stream.context().device() + ", the kernel was loaded on "
                    + context.device());
        }
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the compute kernel is closed");
            }
        }
        stream.launchKernel(function, 1, 1, 0, Pointer.to(Pointer.to(new long[]{nanos})), "compute " + nanos + " ns");
    }

    /** Unloads the module: close it after the streams that ran it have drained. Closing twice does nothing. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        context.makeCurrent();
        JCudaDriver.cuModuleUnload(module);
    }
}
