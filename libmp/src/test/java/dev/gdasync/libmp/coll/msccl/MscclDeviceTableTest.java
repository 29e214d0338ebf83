package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The kernel interpreter's table for the reference ring and recursive doubling/halving programs: the header, each
 * block's connections (a ring: block r sends into block r+1's region and acknowledges into block r−1's), buffers
 * and step records, at the offsets the CUDA structs assert.
 */
class MscclDeviceTableTest {
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;

    @Test
    void ringTableConnectsEachBlockToItsNeighbours() {
        MscclProgram ring = new MscclParser(MscclLimits.defaults())
                .parse(MscclRanks.resource("reference/allreduce_ring_4gpu_simple.xml"));
        try (Arena arena = Arena.ofConfined()) {
            // 4 chunks of 1000 int32, 1 KiB slots: 256 elements a tile, 4 tiles (the last of 232).
            MscclDeviceTable.Encoded t = MscclDeviceTable.encode(ring, DataType.INT32, ReduceOp.SUM, 4000, 2, 1024, 7,
                    arena);
            MemorySegment h = t.header();
            assertEquals(MscclTableLayout.MAGIC, h.get(I32, 0));
            assertEquals(4, h.get(I32, 8));
            assertEquals(4, h.get(I32, 12));
            assertEquals(256, h.get(I64, 16));
            assertEquals(1000, h.get(I64, 24));
            assertEquals(7L << 32, h.get(I64, 48));
            assertEquals(t.layout().semaphores(), h.get(I64, 56));
            long ack = 2 * 1024 + 2 * 8;
            for (int r = 0; r < 4; r++) {
                long rec = (long) MscclTableLayout.TB_BYTES * r;
                assertEquals(7L * r, t.tbs().get(I32, rec), "first step");
                assertEquals(7, t.tbs().get(I32, rec + 4));
                assertEquals(r, t.tbs().get(I32, rec + 8), "gpu's first block");
                assertEquals(3, t.tbs().get(I32, rec + 12), "sends and receives");
                assertEquals(t.layout().region()[r], t.tbs().get(I64, rec + 16));
                assertEquals(t.layout().region()[(r + 1) % 4], t.tbs().get(I64, rec + 24), "sends to the next");
                assertEquals(t.layout().region()[r] + ack, t.tbs().get(I64, rec + 32));
                assertEquals(t.layout().region()[(r + 3) % 4] + ack, t.tbs().get(I64, rec + 40), "acks the previous");
                // In place: input and output are the rank's one buffer.
                assertEquals(t.tbs().get(I64, rec + 48), t.tbs().get(I64, rec + 56));
                assertEquals(t.layout().input()[r], t.tbs().get(I64, rec + 48));
            }
            // Rank 0's step 3: rrcs of chunk 1.
            long st = 3L * MscclTableLayout.STEP_BYTES;
            assertEquals(StepType.RECV_REDUCE_COPY_SEND.ordinal(), t.steps().get(ValueLayout.JAVA_BYTE, st));
            assertEquals(1, t.steps().get(I16, st + 4));
            assertEquals(1, t.steps().get(I16, st + 8));
            assertEquals(-1, t.steps().get(I16, st + 10));
        }
    }

    @Test
    void dependenciesAndBlocksOfOtherGpusAreIndexedPerGpu() {
        MscclProgram rdh = new MscclParser(MscclLimits.defaults())
                .parse(MscclRanks.resource("reference/allreduce_rdh_4gpu_simple.xml"));
        try (Arena arena = Arena.ofConfined()) {
            MscclDeviceTable.Encoded t = MscclDeviceTable.encode(rdh, DataType.FLOAT64, ReduceOp.MAX, 64, 4, 64, 0,
                    arena);
            assertEquals(8, t.header().get(I32, 8));
            assertEquals(3, t.header().get(I32, 40), "FLOAT64");
            assertEquals(2, t.header().get(I32, 44), "MAX");
            // Gpu 1's blocks are launch blocks 2 and 3; gpu 1 tb 1 step 2 waits for its tb 0 step 3.
            long rec = 3L * MscclTableLayout.TB_BYTES;
            assertEquals(2, t.tbs().get(I32, rec + 8));
            long st = (long) (t.tbs().get(I32, rec) + 2) * MscclTableLayout.STEP_BYTES;
            assertEquals(0, t.steps().get(I16, st + 10));
            assertEquals(3, t.steps().get(I16, st + 12));
            assertEquals(2, t.steps().get(I16, st + 8), "cnt");
            assertThrows(IllegalArgumentException.class,
                    () -> MscclDeviceTable.encode(rdh, DataType.INT32, ReduceOp.SUM, 6, 4, 64, 0, arena));
        }
    }

    @Test
    void oneRanksTableForTheKiFormKeepsTheKernelsStepsAndNamesHeapOffsetsAndPes() {
        MscclProgram rdh = new MscclParser(MscclLimits.defaults())
                .parse(MscclRanks.resource("reference/allreduce_rdh_4gpu_simple.xml"));
        try (Arena arena = Arena.ofConfined()) {
            MscclDeviceTable.Encoded all = MscclDeviceTable.encode(rdh, DataType.INT32, ReduceOp.SUM, 64, 4, 64, 5,
                    arena);
            long rb = 4 * 64 + 4 * 8 + 8 + 24;
            MscclDeviceTable.KiLayout layout = new MscclDeviceTable.KiLayout(-4096, -8192, 0, 1000, 9000, 20000, rb,
                    new int[] {7, 6, 5, 4});
            MemorySegment t = MscclDeviceTable.encodeRank(rdh, 1, DataType.INT32, ReduceOp.SUM, 64, 4, 64, 5, layout,
                    arena);
            assertEquals(MscclTableLayout.MAGIC, t.get(I32, 0));
            assertEquals(2, t.get(I32, 8), "rank 1's blocks");
            assertEquals(5L << 32, t.get(I64, 48));
            assertEquals(20000, t.get(I64, 56), "semaphores in the heap");
            long steps = MscclTableLayout.HEADER_BYTES + 2L * MscclTableLayout.TB_BYTES;
            long ack = 4 * 64 + 4 * 8;
            for (int b = 0; b < 2; b++) {
                long rec = MscclTableLayout.HEADER_BYTES + (long) MscclTableLayout.TB_BYTES * b;
                MscclProgram.ThreadBlock tb = rdh.gpus().get(1).tbs().get(b);
                long from = (long) MscclTableLayout.TB_BYTES * (2 + b);
                int first = t.get(I32, rec);
                assertEquals(all.tbs().get(I32, from) - all.tbs().get(I32, 2L * MscclTableLayout.TB_BYTES), first);
                assertEquals(tb.steps().size(), t.get(I32, rec + 4));
                assertEquals(0, t.get(I32, rec + 8), "block 0 of the gpu is the table's block 0");
                assertEquals(1000 + rb * b, t.get(I64, rec + 16), "own receive region");
                assertEquals(1000 + rb * rdh.tbConnectedTo(tb.send(), 1, tb.chan(), false), t.get(I64, rec + 24));
                assertEquals(1000 + rb * b + ack, t.get(I64, rec + 32));
                assertEquals(1000 + rb * rdh.tbConnectedTo(tb.recv(), 1, tb.chan(), true) + ack, t.get(I64, rec + 40));
                assertEquals(-4096, t.get(I64, rec + 48));
                assertEquals(-8192, t.get(I64, rec + 56));
                assertEquals(7 - tb.send(), t.get(I32, rec + 80), "send PE");
                assertEquals(7 - tb.recv(), t.get(I32, rec + 84), "receive PE");
                assertEquals(9000 + rb * b, t.get(I64, rec + 88), "staging");
                for (int s = 0; s < tb.steps().size(); s++) {
                    long mine = steps + (long) MscclTableLayout.STEP_BYTES * (first + s);
                    long kernel = (long) MscclTableLayout.STEP_BYTES * (all.tbs().get(I32, from) + s);
                    assertEquals(-1L, MemorySegment.mismatch(t, mine, mine + MscclTableLayout.STEP_BYTES, all.steps(),
                            kernel, kernel + MscclTableLayout.STEP_BYTES), "step " + s + " as the kernel has it");
                }
            }
        }
    }
}
