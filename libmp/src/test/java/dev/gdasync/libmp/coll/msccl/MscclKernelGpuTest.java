package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.cuda.CudaKiExecutor;
import dev.gdasync.ki.kernels.KiKernels;
import dev.gdasync.ki.msccl.MscclKernelTable;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The MSCCL-IR kernel interpreter on a GPU ({@code CudaKiExecutor.runMscclInterpreter}): every rank of each reference
 * program in one cooperative launch, one CUDA block per thread block, int32 SUM data at three tile sizes, every
 * rank's output exact; a wait that can never be met ends the run with an error naming rank, thread block and step.
 * Skipped, with the reason printed, where there is no usable GPU or the build has no kernels. The same cases run on
 * the CPU in {@link MscclKernelMirrorTest}.
 */
@Timeout(300)
class MscclKernelGpuTest {
    private static final Duration LIMIT = Duration.ofSeconds(60);
    /** Polls a wait makes before giving up (about 100 ns apart): about a second. */
    private static final long SPIN = 10_000_000L;
    private static String skip;
    private static CudaKiExecutor executor;

    @BeforeAll
    static void open() {
        Optional<String> reason = KiKernels.available() ? CudaDriver.unavailableReason()
                : Optional.of("this build has no CUDA kernels: ki-kernels was built without nvcc");
        if (reason.isPresent()) {
            skip = reason.get();
            System.out.println("SKIPPED (GPU): MSCCL kernel interpreter: " + skip);
            return;
        }
        executor = CudaKiExecutor.open(0);
        System.out.println("MSCCL kernel interpreter on " + executor.description());
    }

    @AfterAll
    static void close() {
        if (executor != null) {
            executor.close();
        }
    }

    private static void requireGpu() {
        assumeTrue(skip == null, skip);
    }

    @Test
    void everyReferenceProgramIsExactOnEveryRankAtThreeTileSizes() {
        requireGpu();
        // 1000 elements a chunk: slots of 8 B carry 1 element (1000 tiles), of 200 B 25 or 50, of 64 KiB the chunk.
        for (String name : MscclKernelCase.REFERENCE) {
            MscclProgram p = MscclKernelCase.reference(name);
            for (int slotBytes : new int[] {8, 200, 65536}) {
                for (int threads : new int[] {32, 256}) {
                    try (Arena memory = Arena.ofShared()) {
                        MscclKernelCase c = MscclKernelCase.of(p, 1000, 2, slotBytes, memory);
                        long t0 = System.nanoTime();
                        executor.runMscclInterpreter(c.table, c.arena, threads, SPIN, LIMIT);
                        double ms = (System.nanoTime() - t0) / 1e6;
                        assertEquals(List.of(), c.mismatches(), c + ", " + threads + " threads a block");
                        System.out.printf("OK msccl kernel: %s, %d threads a block: exact on %d ranks (%.1f ms with "
                                + "copies)%n", c, threads, p.ngpus(), ms);
                    }
                }
            }
        }
    }

    @Test
    void aWaitThatCanNeverBeMetEndsTheRunWithAnErrorNamingRankThreadBlockAndStep() {
        requireGpu();
        MscclProgram rdh = MscclKernelCase.reference("allreduce_rdh_4gpu_simple.xml");
        try (Arena memory = Arena.ofShared()) {
            MscclDeviceTable.Encoded e = MscclDeviceTable.encode(rdh, DataType.INT32, ReduceOp.SUM, 8, 1, 64, 1, memory);
            MscclKernelCase.makeUnmeetable(e);
            MscclKernelTable t = MscclKernelTable.of(e.header(), e.tbs(), e.steps(), e.layout().arenaBytes(), memory);
            KiException x = assertThrows(KiException.class, () -> executor.runMscclInterpreter(t,
                    memory.allocate(e.layout().arenaBytes(), 64), 64, 100_000, LIMIT));
            assertTrue(x.getMessage().contains("gave up waiting at step") && x.getMessage().contains("spin_limit 100000"),
                    x.getMessage());
        }
        // The executor is still usable after a run that gave up.
        try (Arena memory = Arena.ofShared()) {
            MscclKernelCase c = MscclKernelCase.of(MscclKernelCase.reference("allreduce_ring_4gpu_simple.xml"), 64, 2, 64,
                    memory);
            executor.runMscclInterpreter(c.table, c.arena, 64, SPIN, LIMIT);
            assertEquals(List.of(), c.mismatches(), c.toString());
        }
    }
}
