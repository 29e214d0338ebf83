package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.cuda.CudaKiExecutor;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.kernels.KiKernels;

import java.io.PrintStream;
import java.util.Optional;

/** Picks the executor of the {@code ki} mode: the GPU when there is one, else the host KI executor. */
final class KiExecutors {
    private KiExecutors() {
    }

    /**
     * @param choice    what the command line asked for
     * @param name      names the host executor's threads
     * @param cpus      CPUs to pin the host executor's kernel thread to, or none
     * @param afterRing the host executor's after-ring hook (the NIC's {@code progressStoreRings})
     * @param out       where to say which executor runs, or null to stay quiet
     * @return the executor
     * @throws IllegalStateException if the GPU was asked for and cannot be used (the message says why)
     */
    static KiExecutor open(PingPongOptions.KiExecutorChoice choice, String name, int[] cpus, Runnable afterRing,
                           PrintStream out) {
        if (choice != PingPongOptions.KiExecutorChoice.HOST) {
            Optional<String> noGpu = gpuUnavailable();
            if (noGpu.isEmpty()) {
                try {
                    CudaKiExecutor gpu = CudaKiExecutor.open(0);
                    say(out, "ki: CUDA kernels on " + gpu.description());
                    return gpu;
                } catch (CudaException | KiException e) {
                    noGpu = Optional.of(e.getMessage());
                }
            }
            if (choice == PingPongOptions.KiExecutorChoice.GPU) {
                throw new IllegalStateException("--ki-executor gpu: " + noGpu.get());
            }
            say(out, "ki: no GPU kernels here (" + noGpu.get() + "); using the host KI executor");
        }
        // The kernel thread runs the NIC's work for its own rings: on a machine with few CPUs, waiting for
        // the agent thread to be scheduled costs far more than the work itself (docs/ki.md, "On the host").
        KiExecutor host = HostKiExecutor.create(name, HostKiExecutor.Options.defaults().withCpus(cpus).withAfterRing(afterRing));
        say(out, "ki: host KI executor (kernel threads " + (cpus.length > 0 ? "pinned to distinct CPUs" : "not pinned") + ")");
        return host;
    }

    /** @return why the GPU executor cannot run here, or empty when it can */
    static Optional<String> gpuUnavailable() {
        if (!KiKernels.available()) {
            return Optional.of("this build has no CUDA kernels: ki-kernels was built without nvcc");
        }
        return CudaDriver.unavailableReason();
    }

    private static void say(PrintStream out, String line) {
        if (out != null) {
            out.println(line);
        }
    }
}
