package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * On a machine with a GPU: the device-memory scenarios of {@link DeviceMemoryTest} and the two-process
 * CUDA IPC run of {@link DeviceIpcTest}, against the real driver in child JVMs started with this JVM's
 * environment. Skips, printing why, anywhere else.
 */
class DeviceMemoryGpuTest {
    @TempDir
    Path dir;

    private static void requireGpu() {
        Optional<String> reason = CudaDriver.unavailableReason();
        reason.ifPresent(r -> System.out.println("SKIPPED (GPU): " + r));
        assumeTrue(reason.isEmpty(), reason.orElse(""));
    }

    /** A child JVM with this JVM's class path and environment (the real libcuda). */
    private static FakeCuda.Child child(Path tmp, Class<?> main, String... args) {
        return FakeCuda.runChild(tmp, List.of(), main, args);
    }

    private static void assertRanClean(FakeCuda.Child c) {
        assertTrue(c.stdout().contains("end\n"), c::toString);
        assertFalse(c.stdout().contains("FAIL "), c::toString);
        assertEquals(0, c.exitCode(), c::toString);
    }

    @Test
    void everyOpcodeMovesDeviceBytesBetweenTwoNicsOfOneProcess() throws IOException {
        requireGpu();
        FakeCuda.Child c = child(dir, DeviceScenariosMain.class, Files.createDirectory(dir.resolve("shm")).toString(),
                "all");
        assertRanClean(c);
        for (String scenario : List.of("send-host-to-device", "send-with-imm-gathers-device-and-host-scatters-into-both",
                "rdma-write-host-to-device", "rdma-write-with-imm-device-to-device", "rdma-write-device-to-host",
                "rdma-read-from-device-into-host-and-device", "rdma-read-from-host-into-device",
                "prepared-send-rung-by-plain-stores-runs-on-the-agent", "forged-rkey-on-device-memory",
                "out-of-bounds-on-device-memory", "closing-a-device-region-ends-its-registrations-and-frees-it")) {
            assertTrue(c.stdout().contains("ok " + scenario + "\n"), () -> scenario + " did not pass:\n" + c);
        }
    }

    @Test
    void aSecondProcessReachesDeviceMemoryThroughCudaIpc() throws Exception {
        requireGpu();
        Path shm = Files.createDirectory(dir.resolve("shm"));
        try (ExecutorService children = Executors.newFixedThreadPool(2)) {
            Future<FakeCuda.Child> owner = children.submit(() -> child(dir, DevicePeerMain.class, "owner", dir.toString(),
                    shm.toString(), "close"));
            Future<FakeCuda.Child> user = children.submit(() -> child(dir, DevicePeerMain.class, "user", dir.toString(),
                    shm.toString()));
            FakeCuda.Child o = owner.get();
            FakeCuda.Child u = user.get();
            String both = "--- owner\n" + o + "\n--- user\n" + u;
            assertRanClean(o);
            assertRanClean(u);
            assertTrue(o.stdout().contains("ok owner-serves-every-step\n"), both);
            assertTrue(u.stdout().contains("ok user-step-10\n"), both);
            assertTrue(u.stdout().contains("ok the-owner-going-away-unmaps-its-device-memory\n"), both);
        }
    }
}
