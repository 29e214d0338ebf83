package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The CUDA executor's JCuda calls against the fake driver library (gdsync's test support): module
 * choice, the co-residency refusal, the kernel parameters as the driver receives them, status reports
 * and launch failures. Nothing here runs a kernel; the fake records the launches.
 */
class FakeCudaExecutorTest {
    private static final long OFFSET = 0x1_0000_0000L;

    @TempDir
    static Path dir;
    private static Path fake;
    private static String skip;
    private static int runs;

    @BeforeAll
    static void build() throws IOException {
        Optional<String> reason = FakeCuda.unavailableReason();
        if (reason.isPresent()) {
            skip = reason.get();
            return;
        }
        fake = FakeCuda.build(Files.createDirectory(dir.resolve("lib")));
    }

    private record Run(FakeCuda.Child child, List<String> log) {
        String line(String prefix) {
            return child.stdout().lines().filter(l -> l.startsWith(prefix)).findFirst()
                    .orElseThrow(() -> new AssertionError("no line '" + prefix + "' in\n" + child));
        }

        String logLine(String prefix) {
            return log.stream().filter(l -> l.startsWith(prefix)).findFirst()
                    .orElseThrow(() -> new AssertionError("no log line '" + prefix + "' in\n" + log + "\n" + child));
        }

        long table() {
            return Long.parseLong(line("table: 0x").substring("table: 0x".length()), 16);
        }
    }

    private static Run run(Map<String, String> env, String... scenarios) throws IOException {
        if (skip != null) {
            System.out.println("SKIPPED (fake libcuda): " + skip);
        }
        assumeTrue(skip == null, skip);
        Path log = dir.resolve("run" + (++runs) + ".log");
        Map<String, String> all = new HashMap<>(Map.of("FAKE_CUDA_NAME", "NVIDIA X", "FAKE_CUDA_SMS", "4",
                "FAKE_CUDA_BLOCKS_PER_SM", "2", "FAKE_CUDA_DEVPTR_OFFSET", Long.toString(OFFSET), "FAKE_CUDA_LOG",
                log.toString()));
        all.putAll(env);
        FakeCuda.Child c = FakeCuda.run(fake, dir, all, ExecutorProbeMain.class, scenarios);
        assertTrue(c.stdout().contains("end"), c::toString);
        return new Run(c, Files.exists(log) ? Files.readAllLines(log) : List.of());
    }

    @Test
    void theCubinForTheDeviceIsLoadedAndDescribed() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_CC", "9.0"));
        assertEquals("open: NVIDIA X (device 0) | NVIDIA X (device 0, compute capability 9.0, 4 multiprocessors), KI "
                + "kernels from cubin for compute capability 9.0", r.line("open: "));
        assertEquals("cuModuleLoadData CUBIN_90", r.logLine("cuModuleLoadData"));
        assertEquals("cuOccupancyMaxActiveBlocksPerMultiprocessor gds_ki_exchange 128 0",
                r.logLine("cuOccupancyMaxActiveBlocksPerMultiprocessor"));
        assertEquals("cuStreamCreate 1", r.logLine("cuStreamCreate"), "a non-blocking stream of its own");
    }

    @Test
    void withoutAFittingCubinThePtxIsJitCompiled() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_CC", "10.0"));
        assertTrue(r.line("open: ").endsWith("KI kernels from PTX for sm_80 (ISA 8.0), JIT-compiled by the driver for "
                + "compute capability 10.0 (no cubin fits)"), r.child()::toString);
        assertEquals("cuModuleLoadData .version", r.logLine("cuModuleLoadData"));
    }

    @Test
    void aDeviceNoImageRunsOnIsRefusedWithWhatToBuild() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_CC", "7.5"));
        assertEquals("open: KiException: the KI kernels cannot run on NVIDIA X (device 0, compute capability 7.5, 4 "
                + "multiprocessors): no KI kernel image runs on compute capability 7.5: this build of ki-kernels has "
                + "cubins for sm_80, sm_90 and PTX for sm_80, and its PTX targets sm_80, newer than the device; build "
                + "ki-kernels with nvcc for sm_75", r.line("open: "));
        assertTrue(r.log().stream().noneMatch(l -> l.startsWith("cuDevicePrimaryCtxRetain")), "nothing was retained");
    }

    @Test
    void aModuleTheDriverRejectsNamesTheImageAndTheResultAndReleasesTheContext() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_CC", "10.0", "FAKE_CUDA_MODULE_RESULT", "222"));
        assertTrue(r.line("open: ").startsWith("open: KiException: the KI kernels did not load on NVIDIA X (device 0, "
                + "compute capability 10.0, 4 multiprocessors): cuModuleLoadData(PTX for sm_80 (ISA 8.0), JIT-compiled "
                + "by the driver for compute capability 10.0 (no cubin fits)) failed with "
                + "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): "), r.child()::toString);
        assertEquals("cuDevicePrimaryCtxRelease 0", r.logLine("cuDevicePrimaryCtxRelease"));
    }

    @Test
    void kernelParametersReachTheDriverInTheDocumentedOrder() throws IOException {
        Run r = run(Map.of(), "pingpong", "templates", "exchange");
        long table = r.table() + OFFSET;
        assertEquals("pingpong: joined, done=true", r.line("pingpong: "));
        assertEquals("cuLaunchKernel gds_ki_pingpong grid=1,1,1 block=1,1,1 smem=0 params=0x" + Long.toHexString(table)
                + ",2,1,1000,5000000", r.logLine("cuLaunchKernel gds_ki_pingpong"));
        assertEquals("templates: joined", r.line("templates: "));
        String templates = r.logLine("cuLaunchKernel gds_ki_send_templates");
        assertTrue(templates.matches("cuLaunchKernel gds_ki_send_templates grid=1,1,1 block=1,1,1 smem=0 params=0x"
                + Long.toHexString(table) + ",0x[0-9a-f]+,2"), templates);
        assertEquals("exchange: joined", r.line("exchange: "));
        String exchange = r.logLine("cuLaunchCooperativeKernel gds_ki_exchange");
        String prefix = "cuLaunchCooperativeKernel gds_ki_exchange grid=4,1,1 block=128,1,1 smem=0 params=0x"
                + Long.toHexString(table) + ",";
        assertTrue(exchange.startsWith(prefix) && exchange.endsWith(",2,1,7000000"), exchange);
        String[] pointers = exchange.substring(prefix.length()).split(",");
        long ctl = Long.parseLong(pointers[0].substring(2), 16);
        long work = Long.parseLong(pointers[1].substring(2), 16);
        assertEquals(ctl + 64, work, "work follows the control block");
        // Every pointer the kernels get is a registered host address + the fake's offset.
        assertTrue(ctl >= OFFSET, exchange);
    }

    @Test
    void theCoResidencyCheckRefusesBeforeLaunching() throws IOException {
        Run r = run(Map.of(), "occupancy");
        assertEquals("occupancy: KiException: exchange needs 9 co-resident blocks of 128 threads; NVIDIA X holds at "
                + "most 8 (2 per multiprocessor × 4): lower the pack or unpack blocks", r.line("occupancy: "));
        assertTrue(r.log().stream().noneMatch(l -> l.startsWith("cuLaunchCooperativeKernel")), r.log()::toString);
    }

    @Test
    void theMscclInterpreterRunsAsOneCooperativeLaunchOverDeviceCopiesOfItsTableAndArena() throws IOException {
        Run r = run(Map.of(), "msccl", "msccl-arena");
        assertEquals("msccl: ran, arena back: 1,4", r.line("msccl: "), "the arena went to the device and came back");
        long table = allocation(r, 64 + 2 * 96 + 2 * 16);
        long arena = allocation(r, ExecutorProbeMain.MSCCL_ARENA);
        assertEquals("cuOccupancyMaxActiveBlocksPerMultiprocessor gds_msccl_interpreter 64 0",
                r.logLine("cuOccupancyMaxActiveBlocksPerMultiprocessor gds_msccl_interpreter"));
        assertEquals("cuLaunchCooperativeKernel gds_msccl_interpreter grid=2,1,1 block=64,1,1 smem=0 params=0x"
                + Long.toHexString(table) + ",0x" + Long.toHexString(table + 64) + ",0x" + Long.toHexString(table + 256)
                + ",0x" + Long.toHexString(arena) + ",5000", r.logLine("cuLaunchCooperativeKernel gds_msccl_interpreter"));
        assertTrue(r.log().contains("cuMemFree 0x" + Long.toHexString(arena) + " pid=" + pid(r)), r.log()::toString);
        assertTrue(r.log().contains("cuMemFree 0x" + Long.toHexString(table) + " pid=" + pid(r)), r.log()::toString);
        assertTrue(r.line("msccl-arena: ").startsWith("msccl-arena: IllegalArgumentException: the arena must be native "
                + "memory of the table's 320 bytes, got "), r.line("msccl-arena: "));
    }

    @Test
    void aMscclGridThatCannotBeCoResidentIsRefusedBeforeAnythingIsCopied() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_BLOCKS_PER_SM", "0"), "msccl");
        assertEquals("msccl: KiException: MSCCL-IR interpreter cannot run blocks of 64 threads on NVIDIA X (the "
                + "occupancy calculator gives 0 blocks per multiprocessor): the kernel uses too many registers or too much "
                + "shared memory for this GPU", r.line("msccl: "));
        assertTrue(r.log().stream().noneMatch(l -> l.startsWith("cuMemAlloc") || l.startsWith("cuLaunch")),
                r.log()::toString);
    }

    @Test
    void shmemKernelsGetTheStateAndHeapAddressesAsTheDeviceSeesThem() throws IOException {
        Run r = run(Map.of(), "shmem", "shmem-pe", "shmem-state");
        assertEquals("shmem: joined", r.line("shmem: "));
        String add = r.logLine("cuLaunchCooperativeKernel gds_shmem_fetch_add");
        assertTrue(add.matches("cuLaunchCooperativeKernel gds_shmem_fetch_add grid=2,1,1 block=1,1,1 smem=0 "
                + "params=0x[0-9a-f]+,0x[0-9a-f]+,3,1,0x[0-9a-f]+"), add);
        String[] p = add.substring(add.indexOf("params=") + 7).split(",");
        long counter = Long.parseLong(p[1].substring(2), 16);
        assertEquals(counter + 64, Long.parseLong(p[4].substring(2), 16), "olds lies 64 bytes after the counter");
        assertTrue(counter >= OFFSET, "a registered host address + the fake's offset: " + add);
        String order = r.logLine("cuLaunchCooperativeKernel gds_shmem_ordering");
        assertTrue(order.matches("cuLaunchCooperativeKernel gds_shmem_ordering grid=2,1,1 block=1,1,1 smem=0 "
                + "params=0x[0-9a-f]+,0x[0-9a-f]+,0x[0-9a-f]+,0x[0-9a-f]+,128,5,1,0,0,0x[0-9a-f]+"), order);
        assertEquals("shmem-pe: IllegalArgumentException: PE 2 is out of range: the state has 2 PEs",
                r.line("shmem-pe: "));
        assertTrue(r.line("shmem-state: ").endsWith("is not a shmem KI state for 3 blocks (prepare it with "
                + "Shmem.kiPrepare and launch as many blocks as it was prepared for)"), r.line("shmem-state: "));
    }

    private static long allocation(Run r, long bytes) {
        String suffix = " " + bytes + " pid=" + pid(r);
        String line = r.log().stream().filter(l -> l.startsWith("cuMemAlloc 0x") && l.endsWith(suffix)).findFirst()
                .orElseThrow(() -> new AssertionError("no allocation of " + bytes + " bytes in " + r.log()));
        return Long.parseLong(line.substring("cuMemAlloc 0x".length(), line.indexOf(' ', 13)), 16);
    }

    private static String pid(Run r) {
        String alloc = r.log().stream().filter(l -> l.startsWith("cuMemAlloc 0x")).findFirst().orElse("pid=?");
        return alloc.substring(alloc.indexOf("pid=") + 4);
    }

    @Test
    void aDeviceWithoutCooperativeLaunchIsRefused() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_COOPERATIVE", "0"), "exchange");
        assertTrue(r.line("exchange: ").startsWith("exchange: KiException: exchange needs a cooperative launch (its 4 "
                + "blocks wait on each other), and NVIDIA X does not support one"), r.child()::toString);
    }

    @Test
    void aStatusTheKernelReportsBecomesAKiExceptionNamingTheEntry() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_LAUNCH_STATUS", "11,2,1"), "pingpong", "joinlimit");
        assertEquals("pingpong: KiException: ping-pong on NVIDIA X (device 0) timed out waiting on wait entry 1",
                r.line("pingpong: "));
        assertEquals("joinlimit: KiException: ping-pong on NVIDIA X (device 0) timed out waiting on wait entry 1",
                r.line("joinlimit: "));
    }

    @Test
    void aFaultedLaunchIsAKiExceptionWithTheDriverResult() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_SYNC_RESULT", "719"), "pingpong");
        assertTrue(r.line("pingpong: ").startsWith("pingpong: KiException: ping-pong on NVIDIA X (device 0) failed: "
                + "cuEventSynchronize failed with CUDA_ERROR_LAUNCH_FAILED (719): a kernel faulted"), r.child()::toString);
    }

    @Test
    void closeReleasesEverythingOnceAndLaterLaunchesAreRefused() throws IOException {
        Run r = run(Map.of(), "pingpong", "exchange");
        assertEquals("closed", r.line("closed"));
        assertEquals("after close: the CUDA KI executor on NVIDIA X (device 0) is closed", r.line("after close: "));
        List<String> log = r.log();
        long registered = log.stream().filter(l -> l.startsWith("cuMemHostRegister ")).count();
        long unregistered = log.stream().filter(l -> l.startsWith("cuMemHostUnregister ")).count();
        assertTrue(registered >= 3, "table, scratch and copy buffers: " + log);
        assertEquals(registered, unregistered, log::toString);
        assertEquals(1, log.stream().filter(l -> l.equals("cuStreamDestroy")).count(), log::toString);
        assertEquals(1, log.stream().filter(l -> l.equals("cuModuleUnload")).count(), log::toString);
        assertEquals("cuDevicePrimaryCtxRelease 0", log.getLast(), log::toString);
    }
}
