package dev.gdasync.gdsync.cuda;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The driver binding in child JVMs: without libcuda.so.1, and against the fake driver library (built with
 * gcc), which makes JCuda's native library load and answer as configured.
 */
class FakeCudaDriverTest {
    @TempDir
    static Path dir;
    private static Path fake;
    private static String skip;

    @BeforeAll
    static void build() throws IOException {
        Optional<String> reason = FakeCuda.unavailableReason();
        if (reason.isPresent()) {
            skip = reason.get();
            return;
        }
        fake = FakeCuda.build(Files.createDirectory(dir.resolve("lib")));
    }

    private static FakeCuda.Child withFake(Map<String, String> env, String... args) {
        if (skip != null) {
            System.out.println("SKIPPED (fake libcuda): " + skip);
        }
        assumeTrue(skip == null, skip);
        return FakeCuda.run(fake, dir, env, DriverProbeMain.class, args);
    }

    @Test
    void withoutTheDriverLibraryTheReasonSaysWhatToDoAndJCudaIsNeverLoaded() {
        Optional<String> here = DriverLibrary.problem(DriverLibrary.NAME);
        if (here.isEmpty()) {
            System.out.println("SKIPPED: this machine has a libcuda.so.1 on its library path");
        }
        assumeTrue(here.isPresent(), "this machine has a libcuda.so.1");
        FakeCuda.Child c = FakeCuda.run(null, dir, Map.of(), DriverProbeMain.class);
        String expected = "libcuda.so.1 not found: install the NVIDIA driver or run on a GPU machine";
        assertTrue(c.stdout().contains("reason: " + expected), c::toString);
        assertTrue(c.stdout().contains("CudaException: " + expected), c::toString);
        assertTrue(c.stdout().contains("again: " + expected), c::toString);
        assertTrue(c.stdout().contains("end"), c::toString);
        assertFalse((c.stdout() + c.stderr()).contains("UnsatisfiedLinkError"), c::toString);
        assertFalse((c.stdout() + c.stderr()).contains("NoClassDefFoundError"), c::toString);
        assertEquals(0, c.exitCode(), c::toString);
    }

    @Test
    void jcudaLoadsAgainstTheFakeAndReadsTheDevice() {
        FakeCuda.Child c = withFake(Map.of("FAKE_CUDA_NAME", "Test GPU", "FAKE_CUDA_CC", "8.6", "FAKE_CUDA_SMS", "108",
                "FAKE_CUDA_DRIVER_VERSION", "12040"));
        assertTrue(c.stdout().contains("reason: none"), c::toString);
        assertTrue(c.stdout().contains("driver: CUDA driver 12.4 with 1 device(s)"), c::toString);
        assertTrue(c.stdout().contains("device: Test GPU (device 0, compute capability 8.6, 108 multiprocessors) "
                + "cooperative=true hostPointer=true unified=true"), c::toString);
        assertFalse(c.stderr().contains("UnsatisfiedLinkError"), c::toString);
        assertEquals(0, c.exitCode(), c::toString);
    }

    @Test
    void noDeviceIsCudaErrorNoDeviceWithAdvice() {
        FakeCuda.Child c = withFake(Map.of("FAKE_CUDA_INIT_RESULT", "100"));
        String expected = "cuInit failed with CUDA_ERROR_NO_DEVICE (100): no CUDA device is visible to this process: "
                + "check nvidia-smi, CUDA_VISIBLE_DEVICES and the permissions of /dev/nvidia*";
        assertTrue(c.stdout().contains("reason: " + expected), c::toString);
        assertTrue(c.stdout().contains("CudaException: " + expected), c::toString);
        assertTrue(c.stdout().contains("again: " + expected), c::toString);
    }

    @Test
    void theToolkitStubIsNamed() {
        FakeCuda.Child c = withFake(Map.of("FAKE_CUDA_INIT_RESULT", "34"));
        assertTrue(c.stdout().contains("CudaException: cuInit failed with CUDA_ERROR_STUB_LIBRARY (34): the "
                + "libcuda.so.1 found is the CUDA toolkit's stub"), c::toString);
    }

    @Test
    void anOldDriverIsRefusedBeforeCuInitWithBothVersions() {
        Path log = dir.resolve("old.log");
        FakeCuda.Child c = withFake(Map.of("FAKE_CUDA_DRIVER_VERSION", "11040", "FAKE_CUDA_LOG", log.toString()));
        assertTrue(c.stdout().contains("CudaException: the NVIDIA driver supports CUDA 11.4, but gdasync's CUDA binding "
                + "(JCuda 12.6.0) needs CUDA 12.0 or newer: update the NVIDIA driver to R525 or newer"), c::toString);
        assertFalse(Files.exists(log), "cuInit must not be called");
    }

    @Test
    void zeroDevicesAfterASuccessfulInitIsReported() {
        FakeCuda.Child c = withFake(Map.of("FAKE_CUDA_DEVICES", "0"));
        assertTrue(c.stdout().contains("CudaException: cuDeviceGetCount found no CUDA device: check nvidia-smi and "
                + "CUDA_VISIBLE_DEVICES"), c::toString);
    }

    @Test
    void theAddressMapRegistersSegmentsInWholePagesAndTranslatesThroughTheDriver() throws IOException {
        Path log = dir.resolve("map.log");
        FakeCuda.Child c = withFake(Map.of("FAKE_CUDA_DEVPTR_OFFSET", "0x100000000", "FAKE_CUDA_LOG", log.toString()),
                "map");
        assertTrue(c.stdout().contains("w1: 4294967296"), c::toString);
        assertTrue(c.stdout().contains("w2: 4294967296"), c::toString);
        assertTrue(c.stdout().contains("w3: 4294967296"), c::toString);
        assertTrue(c.stdout().contains("closed"), c::toString);
        String a = c.stdout().lines().filter(l -> l.startsWith("a: ")).findFirst().orElseThrow().substring(3);
        List<String> lines = Files.readAllLines(log);
        long page = HostPages.size();
        long aBytes = (10_000 + page - 1) / page * page;
        // PORTABLE | DEVICEMAP = 3; the 10000-byte segment is registered as whole pages, once.
        assertTrue(lines.contains("cuMemHostRegister " + a + " " + aBytes + " 3"), lines::toString);
        long registers = lines.stream().filter(l -> l.startsWith("cuMemHostRegister ")).count();
        long unregisters = lines.stream().filter(l -> l.startsWith("cuMemHostUnregister ")).count();
        assertTrue(registers >= 1 && registers <= 2, lines::toString);
        assertEquals(registers, unregisters, lines::toString);
        assertTrue(lines.contains("cuMemHostUnregister " + a), lines::toString);
        assertTrue(c.stdout().contains("ranges: " + registers), c::toString);
    }
}
