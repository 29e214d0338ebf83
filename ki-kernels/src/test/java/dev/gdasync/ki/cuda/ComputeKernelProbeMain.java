package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaStream;

/**
 * A child JVM of {@link FakeCudaComputeKernelTest}: loads the packaged compute kernel into the (fake) driver,
 * launches it on a CUDA stream, and prints what each step said, then {@code end}.
 */
public final class ComputeKernelProbeMain {
    private ComputeKernelProbeMain() {
    }

    /**
     * @param args none
     */
    public static void main(String[] args) {
        try (CudaContext context = CudaContext.retainPrimary(CudaDriver.open().device(0));
             CudaStream stream = CudaStream.create("compute", context)) {
            ComputeKernel kernel = ComputeKernel.load(context);
            kernel.launch(stream, 5000);
            kernel.launch(stream, 0);
            try {
                kernel.launch(stream, -1);
            } catch (IllegalArgumentException e) {
                System.out.println("negative: " + e.getMessage());
            }
            stream.synchronize();
            System.out.println("launched");
            kernel.close();
            kernel.close();
            try {
                kernel.launch(stream, 1);
            } catch (IllegalStateException e) {
                System.out.println("after close: " + e.getMessage());
            }
        } catch (Throwable t) {
            System.out.println("unexpected: " + t);
            t.printStackTrace(System.out);
        }
        System.out.println("end");
    }
}
