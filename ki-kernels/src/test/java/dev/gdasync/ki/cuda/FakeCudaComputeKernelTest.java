package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.cuda.FakeCuda;
import dev.gdasync.ki.kernels.KiKernels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The compute kernel's load and launches as the (fake) driver receives them, in stream order on a CUDA stream. */
class FakeCudaComputeKernelTest {
    @TempDir
    Path dir;

    @Test
    void theKernelLoadsFromThePackagedImagesAndLaunchesOnTheStream() throws IOException {
        Optional<String> reason = FakeCuda.unavailableReason();
        if (reason.isEmpty() && !KiKernels.available()) {
            reason = Optional.of("ki-kernels was built without nvcc: no packaged kernels to load");
        }
        reason.ifPresent(r -> System.out.println("SKIPPED (fake libcuda): " + r));
        assumeTrue(reason.isEmpty(), reason.orElse(""));
        Path lib = FakeCuda.build(Files.createDirectory(dir.resolve("lib")));
        Path log = dir.resolve("driver.log");
        FakeCuda.Child c = FakeCuda.run(lib, dir, Map.of("FAKE_CUDA_LOG", log.toString()), ComputeKernelProbeMain.class);
        List<String> lines = Files.readAllLines(log);
        String all = c + "\n--- driver log\n" + String.join("\n", lines);
        assertTrue(c.stdout().contains("launched\n") && c.stdout().contains("end\n"), all);
        assertTrue(c.stdout().contains("negative: a compute kernel of -1 ns: the length must not be negative\n"), all);
        assertTrue(c.stdout().contains("after close: the compute kernel is closed\n"), all);
        // The cubin for the fake GPU (an ELF image, logged with its unprintable bytes as ?), not the PTX.
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("cuModuleLoadData ?ELF")), all);
        List<String> launches = lines.stream().filter(l -> l.startsWith("cuLaunchKernel ")).toList();
        assertEquals(List.of("cuLaunchKernel gds_compute_spin grid=1,1,1 block=1,1,1 smem=0 params=5000",
                "cuLaunchKernel gds_compute_spin grid=1,1,1 block=1,1,1 smem=0 params=0"), launches, all);
        assertEquals(1, lines.stream().filter(l -> l.equals("cuModuleUnload")).count(), all);
    }
}
