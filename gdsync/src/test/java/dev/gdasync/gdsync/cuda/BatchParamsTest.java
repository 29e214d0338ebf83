package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.BarrierScope;
import dev.gdasync.gdsync.memop.Memop;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The {@code CUstreamBatchMemOpParams} bytes, at the offsets of {@code cuda.h}. */
class BatchParamsTest {
    private static final Memop SOURCE = new Memop.Barrier(BarrierScope.SYSTEM);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Test
    void theUnionIs48BytesWithCudasOffsets() {
        assertEquals(48, BatchParams.SIZE);
        assertEquals(8, BatchParams.PARAMS.byteAlignment());
        assertEquals(40, BatchParams.VALUE.byteSize());
        assertEquals(0, BatchParams.offsetOf(BatchParams.VALUE, "operation"));
        assertEquals(8, BatchParams.offsetOf(BatchParams.VALUE, "address"));
        assertEquals(16, BatchParams.offsetOf(BatchParams.VALUE, "v"));
        assertEquals(24, BatchParams.offsetOf(BatchParams.VALUE, "flags"));
        assertEquals(32, BatchParams.offsetOf(BatchParams.VALUE, "alias"));
        assertEquals(0, BatchParams.offsetOf(BatchParams.BARRIER, "operation"));
        assertEquals(4, BatchParams.offsetOf(BatchParams.BARRIER, "flags"));
    }

    @Test
    void operationsAreEncodedAtTheirOffsetsAndTheRestIsZero() {
        List<DriverOp> ops = List.of(
                new DriverOp(DriverOp.Kind.BARRIER, 0, 0, 1, SOURCE),
                new DriverOp(DriverOp.Kind.WAIT_VALUE_32, 0x7f00_1234_5678L, 0xFFFF_FFF0L, 3 | 1 << 30, SOURCE),
                new DriverOp(DriverOp.Kind.WRITE_VALUE_32, 0x1000L, 0x8000_0001L, 0, SOURCE),
                new DriverOp(DriverOp.Kind.WAIT_VALUE_64, 0x2000L, 0x0102_0304_0506_0708L, 1, SOURCE),
                new DriverOp(DriverOp.Kind.WRITE_VALUE_64, 0x3008L, -2L, 0, SOURCE));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(10 * BatchParams.SIZE, 8);
            out.fill((byte) 0x5A);
            // Encode ops 1..4 only: the slice starts with op 1.
            MemorySegment p = BatchParams.encode(ops, 1, 5, out);
            assertEquals(4 * 48, p.byteSize());
            long[] expected = new long[4 * 6];
            expected[0] = 1;                       // WAIT_VALUE_32, padding
            expected[1] = 0x7f00_1234_5678L;       // address
            expected[2] = 0xFFFF_FFF0L;            // value, upper half zero
            expected[3] = 3 | 1L << 30;            // flags, padding
            expected[6] = 2;
            expected[7] = 0x1000;
            expected[8] = 0x8000_0001L;
            expected[12] = 4;
            expected[13] = 0x2000;
            expected[14] = 0x0102_0304_0506_0708L;
            expected[15] = 1;
            expected[18] = 5;
            expected[19] = 0x3008;
            expected[20] = -2L;
            for (int i = 0; i < expected.length; i++) {
                assertEquals(expected[i], p.get(LONG, i * 8L), "qword " + i + " (op " + i / 6 + ", byte " + i % 6 * 8 + ")");
            }
            MemorySegment b = BatchParams.encode(ops, 0, 1, out);
            assertEquals(6, b.get(INT, 0), "CU_STREAM_MEM_OP_BARRIER");
            assertEquals(1, b.get(INT, 4), "CU_STREAM_MEMORY_BARRIER_TYPE_GPU");
            for (long off = 8; off < 48; off += 8) {
                assertEquals(0, b.get(LONG, off));
            }
        }
    }

    @Test
    void aHostCopyIsNotAStreamMemop() {
        List<DriverOp> ops = List.of(new DriverOp(DriverOp.Kind.HOST_COPY, 0x1000, 3, 0, SOURCE));
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(IllegalArgumentException.class, () -> BatchParams.encode(ops, 0, 1, arena.allocate(48, 8)));
        }
    }
}
