package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Device memory in the software NIC between two NICs of one process, against the stand-in driver library
 * (built with gcc): every opcode that moves bytes, with payloads read back from device memory, the
 * failure semantics on device memory, and what the driver saw (no CUDA IPC within a process, every
 * allocation freed).
 */
class DeviceMemoryTest {
    @TempDir
    static Path dir;
    private static Path fake;
    private static String skip;
    private static FakeCuda.Child all;
    private static List<String> allLog;
    private static Path allDeviceFiles;

    @BeforeAll
    static void build() throws IOException {
        Optional<String> reason = FakeCuda.unavailableReason();
        if (reason.isPresent()) {
            skip = reason.get();
            return;
        }
        fake = FakeCuda.build(Files.createDirectory(dir.resolve("lib")));
        Path log = dir.resolve("all.log");
        allDeviceFiles = Files.createDirectory(dir.resolve("all-devmem"));
        all = FakeCuda.run(fake, dir, Map.of("FAKE_CUDA_LOG", log.toString(), "FAKE_CUDA_SHM_DIR", allDeviceFiles.toString(),
                "FAKE_CUDA_DEVICES", "2"), DeviceScenariosMain.class, Files.createDirectory(dir.resolve("all-shm")).toString(),
                "all");
        allLog = Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    private static void assumeFake() {
        if (skip != null) {
            System.out.println("SKIPPED (fake libcuda): " + skip);
        }
        assumeTrue(skip == null, skip);
    }

    private static void assertScenario(String name) {
        assumeFake();
        assertTrue(all.stdout().contains("ok " + name + "\n"), () -> "scenario " + name + " did not pass:\n" + all);
    }

    @Test
    void theChildRanToTheEndWithoutFailures() {
        assumeFake();
        assertTrue(all.stdout().contains("end"), all::toString);
        assertFalse(all.stdout().contains("FAIL "), all::toString);
        assertEquals(0, all.exitCode(), all::toString);
    }

    @Test
    void sendFromHostIntoAPostedDeviceReceive() {
        assertScenario("send-host-to-device");
    }

    @Test
    void sendWithImmediateGathersAndScattersAcrossHostAndDevice() {
        assertScenario("send-with-imm-gathers-device-and-host-scatters-into-both");
    }

    @Test
    void rdmaWriteHostToDevice() {
        assertScenario("rdma-write-host-to-device");
    }

    @Test
    void rdmaWriteWithImmediateDeviceToDevice() {
        assertScenario("rdma-write-with-imm-device-to-device");
    }

    @Test
    void rdmaWriteDeviceToHost() {
        assertScenario("rdma-write-device-to-host");
    }

    @Test
    void rdmaReadFromDeviceMemory() {
        assertScenario("rdma-read-from-device-into-host-and-device");
        assertScenario("rdma-read-from-host-into-device");
    }

    @Test
    void preparedSendsFromDeviceMemoryRunOnTheAgentAndOnTheCpu() {
        assertScenario("prepared-send-rung-by-plain-stores-runs-on-the-agent");
        assertScenario("prepared-send-posted-on-the-cpu");
    }

    @Test
    void badKeysAndBoundsOnDeviceMemoryFailWithoutWriting() {
        assertScenario("forged-rkey-on-device-memory");
        assertScenario("out-of-bounds-on-device-memory");
        assertScenario("read-out-of-bounds-on-device-memory");
        assertScenario("receive-too-small-in-device-memory");
    }

    @Test
    void atomicsAndInlineOnDeviceMemoryAreRefusedPrecisely() {
        assertScenario("atomics-on-device-memory-are-refused");
        assertScenario("inline-from-device-memory-is-refused");
    }

    @Test
    void deregistrationAndRegionCloseInvalidateAtOnce() {
        assertScenario("deregistration-invalidates-at-once");
        assertScenario("closing-a-device-region-ends-its-registrations-and-frees-it");
        String freed = all.stdout().lines().filter(l -> l.startsWith("freed 0x")).findFirst().orElseThrow().substring(6);
        assertTrue(allLog.stream().anyMatch(l -> l.startsWith("cuMemFree " + freed + " ")), () -> String.join("\n", allLog));
    }

    @Test
    void registrationRules() {
        assertScenario("device-memory-has-no-host-segment");
        assertScenario("device-regions-are-registered-by-their-nic-only");
        assertScenario("one-nic-serves-one-gpu");
        assertScenario("a-closed-nic-frees-its-device-memory");
    }

    @Test
    void withinOneProcessNoIpcIsOpenedAndEveryAllocationIsFreed() throws IOException {
        assumeFake();
        assertTrue(allLog.stream().anyMatch(l -> l.startsWith("cuIpcGetMemHandle ")), () -> String.join("\n", allLog));
        assertFalse(allLog.stream().anyMatch(l -> l.startsWith("cuIpcOpenMemHandle")), () -> String.join("\n", allLog));
        long allocs = allLog.stream().filter(l -> l.startsWith("cuMemAlloc 0x")).count();
        long frees = allLog.stream().filter(l -> l.startsWith("cuMemFree 0x") && !l.contains("invalid")).count();
        assertTrue(allocs > 0, () -> String.join("\n", allLog));
        assertEquals(allocs, frees, () -> String.join("\n", allLog));
        assertFalse(allLog.stream().anyMatch(l -> l.contains("invalid")), () -> String.join("\n", allLog));
        try (Stream<Path> files = Files.list(allDeviceFiles)) {
            assertEquals(List.of(), files.toList(), "the fake's device memory files are all removed");
        }
    }

    @Test
    void aFailingCopyStreamFailsTheRequestAndLeavesHostTrafficAlone() throws IOException {
        assumeFake();
        Path devmem = Files.createDirectory(dir.resolve("fail-devmem"));
        FakeCuda.Child c = FakeCuda.run(fake, dir, Map.of("FAKE_CUDA_MEMCPY_ASYNC_RESULT", "700", "FAKE_CUDA_SHM_DIR",
                devmem.toString()), DeviceScenariosMain.class, Files.createDirectory(dir.resolve("fail-shm")).toString(),
                "copy-fails");
        assertTrue(c.stdout().contains("ok a-failed-device-copy-fails-the-request\n"), c::toString);
        assertTrue(c.stdout().contains("ok host-traffic-is-unaffected-by-a-failing-copy-stream\n"), c::toString);
        assertTrue(c.stderr().contains("cuMemcpyHtoDAsync") && c.stderr().contains("CUDA_ERROR_ILLEGAL_ADDRESS (700)"),
                c::toString);
        assertTrue(c.stdout().contains("end"), c::toString);
    }
}
