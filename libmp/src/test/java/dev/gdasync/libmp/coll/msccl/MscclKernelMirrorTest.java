package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.ki.msccl.MscclKernelTable;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The kernel interpreter's table and protocol on the CPU: the four reference programs, encoded by
 * {@link MscclDeviceTable}, checked by {@link MscclKernelTable} and run by {@link MscclKernelMirror} (the kernel
 * transcribed into Java, a thread per CUDA block) with int32 data at three tile sizes, exact on every rank; a wait that
 * can never be met gives up and is reported with rank, thread block and step; malformed tables are refused before a
 * launch with what is wrong. {@code MscclKernelGpuTest} runs the same cases on a GPU.
 */
@Timeout(120)
class MscclKernelMirrorTest {
    private static final long WAIT = 30_000_000_000L;

    @Test
    void everyReferenceProgramIsExactOnEveryRankAtThreeTileSizes() throws InterruptedException {
        // 37 elements a chunk: slots of 8 B carry 1 element (37 tiles), of 40 B 5 or 10 (8 or 4 tiles), 64 KiB all.
        for (String name : MscclKernelCase.REFERENCE) {
            MscclProgram p = MscclKernelCase.reference(name);
            for (int slotBytes : new int[] {8, 40, 65536}) {
                try (Arena memory = Arena.ofShared()) {
                    MscclKernelCase c = MscclKernelCase.of(p, 37, 2, slotBytes, memory);
                    List<String> failures = MscclKernelMirror.run(c.table, c.arena, WAIT);
                    assertEquals(List.of(), failures, c.toString());
                    assertEquals(List.of(), c.mismatches(), c.toString());
                }
            }
        }
    }

    @Test
    void aWaitThatCanNeverBeMetGivesUpNamingRankThreadBlockAndStep() throws InterruptedException {
        MscclProgram rdh = MscclKernelCase.reference("allreduce_rdh_4gpu_simple.xml");
        try (Arena memory = Arena.ofShared()) {
            MscclDeviceTable.Encoded e = MscclDeviceTable.encode(rdh, DataType.INT32, ReduceOp.SUM, 8, 1, 64, 1, memory);
            int at = MscclKernelCase.makeUnmeetable(e);
            MscclKernelTable t = MscclKernelTable.of(e.header(), e.tbs(), e.steps(), e.layout().arenaBytes(), memory);
            List<String> failures = MscclKernelMirror.run(t, memory.allocate(e.layout().arenaBytes(), 64), 200_000_000L);
            int block = blockOfStep(e, at);
            String first = "rank " + t.rankOf(block) + " thread block " + t.threadBlockOf(block) + " gave up waiting at step "
                    + (at - e.tbs().get(ValueLayout.JAVA_INT_UNALIGNED, (long) MscclTableLayout.TB_BYTES * block));
            assertTrue(failures.contains(first), first + " in " + failures);
        }
    }

    private static int blockOfStep(MscclDeviceTable.Encoded e, int step) {
        int ntb = e.header().get(ValueLayout.JAVA_INT_UNALIGNED, 8);
        for (int b = 0; b < ntb; b++) {
            long rec = (long) MscclTableLayout.TB_BYTES * b;
            int first = e.tbs().get(ValueLayout.JAVA_INT_UNALIGNED, rec);
            if (step >= first && step < first + e.tbs().get(ValueLayout.JAVA_INT_UNALIGNED, rec + 4)) {
                return b;
            }
        }
        throw new AssertionError("no block has step " + step);
    }

    @Test
    void malformedTablesAreRefusedWithWhatIsWrong() {
        MscclProgram ring = MscclKernelCase.reference("allreduce_ring_4gpu_simple.xml");
        refused(ring, e -> e.header().set(ValueLayout.JAVA_INT_UNALIGNED, 0, 0x12345678),
                "MSCCL kernel table: the header's magic is 0x12345678, not 0x4c43534d (\"MSCL\")");
        refused(ring, e -> e.header().set(ValueLayout.JAVA_INT_UNALIGNED, 8, 5),
                "MSCCL kernel table: the block records hold 384 bytes; 5 blocks need 480");
        refused(ring, e -> e.header().set(ValueLayout.JAVA_INT_UNALIGNED, 40, 7),
                "MSCCL kernel table: the element type code is 7; the kernel knows 0..3 (int32, int64, float32, float64)");
        refused(ring, e -> e.tbs().set(ValueLayout.JAVA_LONG_UNALIGNED, MscclTableLayout.TB_BYTES + 24, 1L << 40),
                "MSCCL kernel table: rank 1 thread block 0 (launch block 1): the region it sends into (arena offset "
                        + (1L << 40) + ", 144 bytes) must be 8-byte aligned and lie in the arena of ");
        refused(ring, e -> e.steps().set(ValueLayout.JAVA_SHORT_UNALIGNED, 10, (short) 1),
                "MSCCL kernel table: rank 0 thread block 0 (launch block 0) step 0: depid 1 names no thread block of rank 0");
        refused(ring, e -> e.steps().set(ValueLayout.JAVA_SHORT_UNALIGNED, 8, (short) 3),
                "MSCCL kernel table: rank 0 thread block 0 (launch block 0) step 0: a message of 3 pieces of 16 elements of "
                        + "4 bytes does not fit a slot of 64 bytes");
        refused(ring, e -> e.steps().set(ValueLayout.JAVA_SHORT_UNALIGNED, 4, (short) 999),
                "MSCCL kernel table: rank 0 thread block 0 (launch block 0) step 0: source chunks [999, 1000) of buffer 0");
    }

    /** Encodes the ring (4 chunks of 16 int32, 2 slots of 64 B), corrupts it and expects the message to start so. */
    private static void refused(MscclProgram p, Consumer<MscclDeviceTable.Encoded> corrupt, String message) {
        try (Arena memory = Arena.ofConfined()) {
            MscclDeviceTable.Encoded e = MscclDeviceTable.encode(p, DataType.INT32, ReduceOp.SUM, 64, 2, 64, 1, memory);
            corrupt.accept(e);
            IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                    () -> MscclKernelTable.of(e.header(), e.tbs(), e.steps(), e.layout().arenaBytes(), memory));
            assertTrue(x.getMessage().startsWith(message), x.getMessage());
        }
    }

    @Test
    void theImageHoldsTheThreePartsBackToBackWithStatusesCleared() {
        MscclProgram ring = MscclKernelCase.reference("allreduce_ring_4gpu_simple.xml");
        try (Arena memory = Arena.ofConfined()) {
            MscclDeviceTable.Encoded e = MscclDeviceTable.encode(ring, DataType.INT32, ReduceOp.SUM, 64, 2, 64, 1, memory);
            e.tbs().set(ValueLayout.JAVA_LONG_UNALIGNED, MscclTableLayout.TB_STATUS, 5);
            MscclKernelTable t = MscclKernelTable.of(e.header(), e.tbs(), e.steps(), e.layout().arenaBytes(), memory);
            MemorySegment img = t.image();
            assertEquals(4, t.blocks());
            assertEquals(64 + 4 * 96, t.stepsOffset());
            assertEquals(-1, img.asSlice(0, 64).mismatch(e.header()));
            assertEquals(-1, img.asSlice(t.stepsOffset(), e.steps().byteSize()).mismatch(e.steps()));
            assertEquals(0, img.get(ValueLayout.JAVA_LONG_UNALIGNED, t.tbsOffset() + MscclTableLayout.TB_STATUS));
            assertEquals(List.of(), t.failures(img.asSlice(t.tbsOffset())));
            assertEquals(List.of(1, 2), List.of(t.rankOf(1), t.rankOf(2)));
        }
    }
}
