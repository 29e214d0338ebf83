package dev.gdasync.gdsync.cuda;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link CudaStream} end to end in child JVMs on the fake driver, whose streams execute their operations on
 * threads of their own: memops reach host memory in order, waits hold later work, the software NIC is driven by
 * the stream's stores, and the error paths fail the stream as they should. The fake's call log shows which driver
 * operations the stream queued.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class FakeCudaStreamTest {
    /** Device pointers differ from host pointers, so a missing translation would write the wrong memory. */
    private static final String OFFSET = "0x100000000";

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
        String out() {
            return child.stdout();
        }

        void ok(String scenario) {
            assertTrue(out().contains(scenario + ": ok"), this::toString);
        }

        boolean matches(String regex) {
            return log.stream().anyMatch(l -> l.matches(regex));
        }

        /** Every memop address is a registered host address plus the device offset. */
        void translated() {
            List<long[]> ranges = new java.util.ArrayList<>();
            for (String l : log) {
                if (l.startsWith("cuMemHostRegister ")) {
                    String[] f = l.split(" ");
                    long start = Long.parseUnsignedLong(f[1].substring(2), 16);
                    ranges.add(new long[] {start, start + Long.parseLong(f[2])});
                }
            }
            long offset = Long.decode(OFFSET);
            int checked = 0;
            for (String l : log) {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("^memop .* 0x([0-9a-f]+) 0x[0-9a-f]+ flags=.*$")
                        .matcher(l);
                if (m.matches()) {
                    long host = Long.parseUnsignedLong(m.group(1), 16) - offset;
                    assertTrue(ranges.stream().anyMatch(r -> host >= r[0] && host < r[1]),
                            "not a registered address plus the offset: " + l + "\n" + this);
                    checked++;
                }
            }
            assertTrue(checked > 0, this::toString);
        }

        boolean logged(String line) {
            return log.stream().anyMatch(l -> l.equals(line) || l.startsWith(line));
        }

        @Override
        public String toString() {
            return child + "--- log (" + log.size() + " lines)\n" + String.join("\n", log.subList(0, Math.min(200, log.size())));
        }
    }

    private static Run run(Map<String, String> env, String... scenarios) throws IOException {
        if (skip != null) {
            System.out.println("SKIPPED (fake libcuda): " + skip);
        }
        assumeTrue(skip == null, skip);
        int n = ++runs;
        Path log = dir.resolve("stream" + n + ".log");
        Path base = Files.createDirectory(dir.resolve("shm" + n));
        Map<String, String> all = new HashMap<>(Map.of("FAKE_CUDA_DEVPTR_OFFSET", OFFSET, "FAKE_CUDA_LOG", log.toString(),
                "FAKE_CUDA_NAME", "NVIDIA X"));
        all.putAll(env);
        String[] args = new String[scenarios.length + 1];
        args[0] = base.toString();
        System.arraycopy(scenarios, 0, args, 1, scenarios.length);
        FakeCuda.Child c = FakeCuda.run(fake, dir, all, CudaStreamMain.class, args);
        List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
        Run r = new Run(c, lines);
        assertTrue(c.stdout().contains("end"), r::toString);
        assertEquals(0, c.exitCode(), r::toString);
        return r;
    }

    @Test
    void everyMemopKindReachesHostMemoryInOrderThroughOneBatchPerPost() throws IOException {
        Run r = run(Map.of(), "memops");
        r.ok("memops");
        r.translated();
        assertTrue(r.out().contains("caps: NVIDIA X (device 0): stream memops v2, batched, 64-bit, wait NOR, "
                + "no remote-write flush"), r::toString);
        // The first post: write32, barrier + write64, 4 aligned 32-bit writes | a host copy | two barriers.
        assertTrue(r.logged("cuStreamBatchMemOp 7"), r::toString);
        assertTrue(r.logged("cuStreamBatchMemOp 2"), r::toString);
        assertTrue(r.logged("memop batch BARRIER flags=0x0"), r::toString);
        assertTrue(r.logged("memop batch BARRIER flags=0x1"), r::toString);
        assertTrue(r.matches("memop batch WRITE_VALUE_64 0x[0-9a-f]+ 0x2222222233333333 flags=0x0"), r::toString);
        assertTrue(r.matches("memop batch WRITE_VALUE_32 0x[0-9a-f]+ 0x13121110 flags=0x0"),
                () -> "the aligned WRITE_MEMORY's first word, little-endian\n" + r);
        assertTrue(r.logged("cuLaunchHostFunc"), r::toString);
        assertTrue(r.matches("memop batch WAIT_VALUE_32 0x[0-9a-f]+ 0xfffffff0 flags=0x3"), () -> "the NOR wait\n" + r);
        assertTrue(r.matches("memop batch WAIT_VALUE_64 0x[0-9a-f]+ 0x10000000000 flags=0x0"),
                () -> "the 64-bit wait, without FLUSH on a GPU that cannot flush\n" + r);
        assertFalse(r.log.stream().anyMatch(l -> l.contains("refused")), r::toString);
    }

    @Test
    void withoutBatchesEachMemopIsOneCallAndBarriersFallBackToAFenceWrite() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_BATCH_PROBE_RESULT", "1"), "memops");
        r.ok("memops");
        r.translated();
        assertTrue(r.out().contains("stream memops v2, one call each"), r::toString);
        assertFalse(r.log.stream().anyMatch(l -> l.startsWith("cuStreamBatchMemOp")), r::toString);
        assertTrue(r.matches("memop cuStreamWriteValue64 WRITE_VALUE_64 0x[0-9a-f]+ 0x2222222233333333 flags=0x0"), r::toString);
        assertTrue(r.matches("memop cuStreamWaitValue32 WAIT_VALUE_32 0x[0-9a-f]+ 0x1 flags=0x0"), r::toString);
        assertFalse(r.log.stream().anyMatch(l -> l.contains("BARRIER")), r::toString);
        assertFalse(r.log.stream().anyMatch(l -> l.contains("refused")), r::toString);
    }

    @Test
    void withoutSixtyFourBitMemopsAWriteIsTwoHalvesAndA64BitWaitIsRefused() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_MEMOPS_64", "0", "FAKE_CUDA_WAIT_NOR", "0"), "memops", "unsupported");
        r.ok("memops");
        r.ok("unsupported");
        assertTrue(r.out().contains("stream memops v2, batched, 32-bit only, no wait NOR"), r::toString);
        assertFalse(r.log.stream().anyMatch(l -> l.contains("VALUE_64")), r::toString);
        int low = indexOf(r, " 0x33333333 flags=0x0");
        int high = indexOf(r, " 0x22222222 flags=0x0");
        assertTrue(low >= 0 && high == low + 1, "low word, then high word\n" + r);
        assertTrue(r.out().contains("nor: IllegalArgumentException: WAIT32 NOR on nor@0x"), r::toString);
        assertTrue(r.out().contains("needs CU_STREAM_WAIT_VALUE_NOR (CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR), "
                + "which NVIDIA X (device 0) lacks: wait with GEQ, EQ or AND"), r::toString);
        assertTrue(r.out().contains("wait64: IllegalArgumentException: WAIT64 on gate64@0x"), r::toString);
        assertTrue(r.out().contains("needs 64-bit stream memops (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS)"),
                r::toString);
    }

    @Test
    void aWaitAskingForAFlushGetsItWhereTheGpuCanFlush() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_FLUSH_REMOTE", "1"), "memops");
        r.ok("memops");
        assertTrue(r.matches("memop batch WAIT_VALUE_64 0x[0-9a-f]+ 0x10000000000 flags=0x40000000"), r::toString);
    }

    @Test
    void eventsOfHostAndCudaStreamsOrderWorkAcrossStreams() throws IOException {
        Run r = run(Map.of(), "events");
        r.ok("events");
        assertTrue(r.logged("cuStreamWaitEvent"), "a CUDA stream's event is waited on by the driver\n" + r);
        assertTrue(r.out().contains("failed event: CUDA stream 'c' waited for Event{stream=bad, failed}, whose stream "
                + "failed"), r::toString);
    }

    @Test
    void theSoftwareNicRunsASendRungByTheStreamsStoresAndTheStreamWaitsForTheReceive() throws IOException {
        Run r = run(Map.of(), "swnic");
        r.ok("swnic");
        assertTrue(r.out().contains("out of order: IllegalStateException: send request #2 of QP"), r::toString);
    }

    @Test
    void theSoftwareMlx5DeviceRunsASendRungByTheStreamsMlx5StoresAndTheStreamWaitsOnTheCqesOwnerBit() throws IOException {
        Run r = run(Map.of(), "mlx5");
        r.ok("mlx5");
        assertTrue(r.out().contains("out of order: IllegalStateException: send request #2 of QP"), r::toString);
    }

    @Test
    void errorPathsFailTheStreamWithTheOriginalCause() throws IOException {
        Run r = run(Map.of(), "throws", "timeout", "close");
        r.ok("throws");
        r.ok("timeout");
        r.ok("close");
        assertTrue(r.out().contains("synchronize: stream 'throws' failed: java.lang.IllegalStateException: task failed "
                + "on purpose"), r::toString);
        assertTrue(r.out().contains("event: task failed on purpose"), r::toString);
        assertTrue(r.out().contains("record: task failed on purpose"), r::toString);
        assertTrue(r.out().contains("timeout: CUDA stream 'stuck' made no progress for "), r::toString);
        assertTrue(r.out().contains("(the wait policy's timeout is 300 ms); still queued, oldest first: WAIT32 GEQ 7 (0x7) "
                + "on never written@0x"), r::toString);
        assertTrue(r.out().contains("(now 0 (0x0)); event"), r::toString);
        assertTrue(r.out().contains("post: CudaStreamTimeoutException"), r::toString);
        assertTrue(r.out().contains("closed event: CUDA stream 'closing' was closed"), r::toString);
        assertTrue(r.out().contains("post after close: IllegalStateException: CUDA stream 'closing' is closed"),
                r::toString);
    }

    @Test
    void copiesBetweenHostAndDeviceMemoryRunInStreamOrder() throws IOException {
        Run r = run(Map.of(), "copies");
        r.ok("copies");
        assertTrue(r.logged("cuMemcpyHtoDAsync"), r::toString);
        assertTrue(r.logged("cuMemcpyDtoHAsync"), r::toString);
        assertTrue(r.out().contains("pointer: true 100"), r::toString);
        assertTrue(r.out().contains("pointer out of range: "), r::toString);
        assertTrue(r.out().contains("heap copy: a copy needs native host memory of at least one byte"), r::toString);
        assertTrue(r.out().contains("grid 0: kernel nothing: grid 0, block 1, shared 0 bytes: grid and block must be positive"),
                r::toString);
    }

    @Test
    void nullArgumentsAreRefusedNamingTheParameterAndAClosedStreamTakesNothing() throws IOException {
        Run r = run(Map.of(), "arguments");
        r.ok("arguments");
        assertTrue(r.out().contains("arguments: 16 null arguments refused"), r::toString);
        assertTrue(r.out().contains("closed post: CUDA stream 'arguments' is closed"), r::toString);
    }

    @Test
    void memopsDisabledInTheDriverAreReportedWithWhatToDo() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_MEMOPS", "0"), "create");
        assertTrue(r.out().contains("create: FAILED dev.gdasync.gdsync.cuda.CudaException: stream memops are disabled in "
                + "the NVIDIA driver: load the nvidia module with NVreg_EnableStreamMemOPs=1"), r::toString);
        assertTrue(r.out().contains("an empty cuStreamBatchMemOp answered CUDA_ERROR_NOT_SUPPORTED (801) (NVIDIA X "
                + "(device 0), driver for CUDA 12.4)"), r::toString);
        assertTrue(r.logged("cuStreamDestroy"), "the stream made for the probe is destroyed\n" + r);
    }

    @Test
    void aStreamOnAWorkingDriverReportsItsCapabilities() throws IOException {
        Run r = run(Map.of("FAKE_CUDA_FLUSH_REMOTE", "1"), "create");
        r.ok("create");
        assertTrue(r.out().contains("caps: NVIDIA X (device 0): stream memops v2, batched, 64-bit, wait NOR, "
                + "remote-write flush"), r::toString);
        assertTrue(r.logged("cuStreamCreate 1"), "a non-blocking stream\n" + r);
    }

    private static int indexOf(Run r, String suffix) {
        for (int i = 0; i < r.log.size(); i++) {
            if (r.log.get(i).matches("memop batch WRITE_VALUE_32 0x[0-9a-f]+" + suffix)) {
                return i;
            }
        }
        return -1;
    }
}
