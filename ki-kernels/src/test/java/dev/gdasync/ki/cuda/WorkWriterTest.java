package dev.gdasync.ki.cuda;

import dev.gdasync.ki.kernels.KiCopy;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiKernelLayout;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The bytes the kernels read besides the table, at the offsets of {@link KiKernelLayout}. */
class WorkWriterTest {
    private static final long DEVICE = 0x5000_0000_0000L;
    private static final long DEST_DEVICE = 0x7000_0000_0000L;
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Arena arena = Arena.ofConfined();

    @AfterEach
    void free() {
        arena.close();
    }

    private static long device(MemorySegment s) {
        return s.address() + DEVICE;
    }

    private static long u64(MemorySegment m, long base, StructLayout struct, String field) {
        return m.get(U64, base + KiKernelLayout.offsetOf(struct, field));
    }

    private static int u32(MemorySegment m, long base, StructLayout struct, String field) {
        return m.get(U32, base + KiKernelLayout.offsetOf(struct, field));
    }

    private KiCopy copy(long bytes) {
        return new KiCopy(arena.allocate(bytes, 8), arena.allocate(bytes, 8));
    }

    @Test
    void layoutsHaveTheDocumentedSizes() {
        assertEquals(16, KiKernelLayout.EXCHANGE_CTL.byteSize());
        assertEquals(24, KiKernelLayout.COPY.byteSize());
        assertEquals(40, KiKernelLayout.EXCHANGE_WORK.byteSize());
        assertEquals(40, KiKernelLayout.TEMPLATE_ARGS.byteSize());
    }

    @Test
    void copyWorkIsTheWorkStructThenPackUnpackAndInteriorCopies() {
        KiCopy p0 = copy(64);
        KiCopy p1 = copy(128);
        KiCopy u0 = copy(256);
        KiCopy in = copy(1000);
        KiCopyWork work = new KiCopyWork(List.of(p0, p1), List.of(u0), in, 4, 500);
        assertEquals(40 + 4 * 24, WorkWriter.copyWorkBytes(work));
        MemorySegment dest = arena.allocate(256, 8);
        dest.fill((byte) 0x5A);
        WorkWriter.writeCopyWork(work, dest, DEST_DEVICE, WorkWriterTest::device);
        StructLayout w = KiKernelLayout.EXCHANGE_WORK;
        assertEquals(DEST_DEVICE + 40, u64(dest, 0, w, "pack"));
        assertEquals(DEST_DEVICE + 40 + 2 * 24, u64(dest, 0, w, "unpack"));
        assertEquals(DEST_DEVICE + 40 + 3 * 24, u64(dest, 0, w, "interior"));
        assertEquals(1, u32(dest, 0, w, "unpack_count"));
        assertEquals(4, u32(dest, 0, w, "interior_chunks"));
        assertEquals(500, u64(dest, 0, w, "interior_ns"));
        KiCopy[] order = {p0, p1, u0, in};
        StructLayout c = KiKernelLayout.COPY;
        for (int i = 0; i < order.length; i++) {
            long base = 40 + 24L * i;
            assertEquals(device(order[i].from()), u64(dest, base, c, "src"), "src of copy " + i);
            assertEquals(device(order[i].to()), u64(dest, base, c, "dst"), "dst of copy " + i);
            assertEquals(order[i].bytes(), u64(dest, base, c, "bytes"), "bytes of copy " + i);
        }
        assertEquals(0x5A, dest.get(ValueLayout.JAVA_BYTE, 136), "nothing written past the work");
    }

    @Test
    void missingPartsAreNullPointers() {
        KiCopyWork work = new KiCopyWork(List.of(), List.of(), null, 3, 0);
        assertEquals(40, WorkWriter.copyWorkBytes(work));
        MemorySegment dest = arena.allocate(40, 8);
        dest.fill((byte) -1);
        WorkWriter.writeCopyWork(work, dest, DEST_DEVICE, WorkWriterTest::device);
        StructLayout w = KiKernelLayout.EXCHANGE_WORK;
        assertEquals(0, u64(dest, 0, w, "pack"));
        assertEquals(0, u64(dest, 0, w, "unpack"));
        assertEquals(0, u64(dest, 0, w, "interior"));
        assertEquals(0, u32(dest, 0, w, "unpack_count"));
        assertEquals(3, u32(dest, 0, w, "interior_chunks"));
    }

    @Test
    void aBufferTheDeviceCannotSeeLeavesTheDestinationUntouched() {
        KiCopy p0 = copy(8);
        KiCopyWork work = new KiCopyWork(List.of(p0), List.of(copy(8)), null, 0, 0);
        MemorySegment dest = arena.allocate(128, 8);
        dest.fill((byte) 7);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WorkWriter.writeCopyWork(work,
                dest, DEST_DEVICE, s -> {
                    if (s.equals(p0.to())) {
                        throw new IllegalArgumentException("not visible");
                    }
                    return device(s);
                }));
        assertEquals("not visible", e.getMessage());
        for (long i = 0; i < dest.byteSize(); i++) {
            assertEquals(7, dest.get(ValueLayout.JAVA_BYTE, i));
        }
        assertThrows(IllegalArgumentException.class, () -> WorkWriter.writeCopyWork(work, arena.allocate(40, 8),
                DEST_DEVICE, WorkWriterTest::device));
    }

    @Test
    void templateArgumentsAreWrittenAsGiven() {
        List<KiTemplateArgs> args = List.of(new KiTemplateArgs(0x1111, 64, 0x22, 0x3333, 0x44),
                new KiTemplateArgs(0x5555, 8, 0x66, 0x7777, 0x88));
        assertEquals(80, WorkWriter.templateArgsBytes(2));
        MemorySegment dest = arena.allocate(80, 8);
        dest.fill((byte) -1);
        WorkWriter.writeTemplateArgs(args, dest);
        StructLayout a = KiKernelLayout.TEMPLATE_ARGS;
        assertEquals(0x1111, u64(dest, 0, a, "laddr"));
        assertEquals(0x22, u64(dest, 0, a, "lkey"));
        assertEquals(0x3333, u64(dest, 0, a, "raddr"));
        assertEquals(0x44, u64(dest, 0, a, "rkey"));
        assertEquals(64, u32(dest, 0, a, "length"));
        assertEquals(0, dest.get(U32, 36), "reserved is zero");
        assertEquals(0x5555, u64(dest, 40, a, "laddr"));
        assertEquals(8, u32(dest, 40, a, "length"));
        assertEquals(0x88, u64(dest, 40, a, "rkey"));
        assertThrows(IllegalArgumentException.class, () -> WorkWriter.writeTemplateArgs(args, arena.allocate(79, 8)));
    }

    @Test
    void theControlBlockStartsAtZero() {
        MemorySegment dest = arena.allocate(32, 8);
        dest.fill((byte) -1);
        WorkWriter.zeroCtl(dest);
        for (String f : List.of("role", "chunk", "arrived", "next_send")) {
            assertEquals(0, u32(dest, 0, KiKernelLayout.EXCHANGE_CTL, f), f);
        }
        assertEquals(-1, dest.get(ValueLayout.JAVA_BYTE, 16), "only the 16-byte block is written");
    }
}
