package dev.gdasync.ki;

import dev.gdasync.ki.kernels.KiKernels;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The kernels the build made with nvcc (or, without nvcc, that the jar says it has none). */
class KiKernelsTest {
    private static final List<String> KERNELS = List.of(KiKernels.PINGPONG, KiKernels.SEND_TEMPLATES, KiKernels.EXCHANGE,
            KiKernels.COMPUTE_SPIN, KiKernels.MSCCL_INTERPRETER, KiKernels.SHMEM_ORDERING,
            KiKernels.SHMEM_FETCH_ADD, KiKernels.SHMEM_OPS);

    private static Path assumeNvcc() {
        Optional<Path> nvcc = NativeTools.nvcc();
        if (nvcc.isEmpty()) {
            String reason = "no nvcc ($NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda/bin): the build made no CUDA kernels";
            System.out.println("KiKernelsTest skipped: " + reason);
            Assumptions.abort(reason);
        }
        return nvcc.get();
    }

    @Test
    void thePtxIsPinnedToIsa80AndHasEveryKernel() {
        assumeNvcc();
        assertTrue(KiKernels.available(), "nvcc is here, but the build packaged no kernels");
        String ptx = KiKernels.ptx();
        assertTrue(ptx.lines().anyMatch(l -> l.equals(".version 8.0")), "PTX ISA is not pinned to 8.0");
        assertTrue(ptx.lines().anyMatch(l -> l.equals(".target sm_80")), "PTX is not for compute_80");
        for (String kernel : KERNELS) {
            assertTrue(ptx.contains(".entry " + kernel + "("), "PTX lacks " + kernel);
        }
    }

    @Test
    void theCubinsAreElfAndChosenByComputeCapability() throws Exception {
        assumeNvcc();
        byte[] sm80 = resource(KiKernels.KERNEL_DIRECTORY + "ki_templates.sm_80.cubin");
        byte[] sm90 = resource(KiKernels.KERNEL_DIRECTORY + "ki_templates.sm_90.cubin");
        for (byte[] cubin : List.of(sm80, sm90)) {
            assertTrue(cubin.length > 4 && cubin[0] == 0x7f && cubin[1] == 'E' && cubin[2] == 'L' && cubin[3] == 'F',
                    "a cubin is not ELF");
        }
        assertArrayEquals(sm80, KiKernels.cubin(8, 0));
        assertArrayEquals(sm80, KiKernels.cubin(8, 6));
        assertArrayEquals(sm80, KiKernels.cubin(8, 9));
        assertArrayEquals(sm90, KiKernels.cubin(9, 0));
        assertEquals(0, KiKernels.cubin(7, 5).length);
        assertEquals(0, KiKernels.cubin(10, 0).length);
        assertEquals(0, KiKernels.cubin(12, 0).length);
    }

    @Test
    void theBuildRecordsWhatItMade() {
        assumeNvcc();
        Properties info = KiKernels.buildInfo();
        assertEquals("8.0", info.getProperty("ptx.isa"));
        assertEquals("compute_80", info.getProperty("ptx.arch"));
        assertEquals("sm_80,sm_90", info.getProperty("cubin.archs"));
        assertEquals(String.join(",", KERNELS), info.getProperty("kernels"));
        assertNotNull(info.getProperty("nvcc.version"));
        for (String arch : List.of("sm_80", "sm_90")) {
            for (String kernel : KERNELS) {
                String registers = info.getProperty("registers." + arch + "." + kernel);
                assertNotNull(registers, "no register count for " + kernel + " on " + arch);
                assertTrue(Integer.parseInt(registers) > 0);
            }
        }
    }

    @Test
    void aKernelThatDoesNotCompileFailsTheBuild(@TempDir Path dir) throws Exception {
        assumeNvcc();
        Path src = Files.createDirectories(dir.resolve("cuda"));
        Files.copy(NativeTools.cudaDir().resolve("build-kernels.sh"), src.resolve("build-kernels.sh"));
        Files.copy(NativeTools.cudaDir().resolve("device.cuh"), src.resolve("device.cuh"));
        Files.writeString(src.resolve("ki_templates.cu"), """
                #include "device.cuh"
                extern "C" __global__ void gds_ki_pingpong(const gds_ki_table_header *table) {
                    gds_ki::send(gds_ki::no_such_entry(table, 0));
                }
                """);
        Path out = dir.resolve("out");
        NativeTools.Result r = NativeTools.run(List.of("bash", src.resolve("build-kernels.sh").toString(), out.toString()));
        assertNotEquals(0, r.exitCode(), "the build script passed a broken kernel:\n" + r.output());
        assertFalse(Files.exists(out.resolve(KiKernels.KERNEL_DIRECTORY + "ki_templates.ptx")));
    }

    @Test
    void withoutKernelsTheAccessorsSaySo() {
        Assumptions.assumeFalse(KiKernels.available(), "this build has kernels");
        IllegalStateException e = assertThrows(IllegalStateException.class, KiKernels::ptx);
        assertTrue(e.getMessage().contains("built without nvcc"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> KiKernels.cubin(9, 0));
    }

    @Test
    void theCudaSourcesTravelInTheJar() {
        assertTrue(KiKernels.cudaSource("device.cuh").contains("struct gds_ki_table_header"));
        for (String kernel : KERNELS) {
            assertTrue(KiKernels.cudaSource("ki_templates.cu").contains(kernel + "("));
        }
        assertThrows(IllegalArgumentException.class, () -> KiKernels.cudaSource("build-kernels.sh"));
    }

    private static byte[] resource(String name) throws Exception {
        try (InputStream in = KiKernels.class.getClassLoader().getResourceAsStream(name)) {
            assertNotNull(in, name + " is not on the class path");
            return in.readAllBytes();
        }
    }
}
