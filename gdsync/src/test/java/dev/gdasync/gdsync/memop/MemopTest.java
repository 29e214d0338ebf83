package dev.gdasync.gdsync.memop;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemopTest {
    private Arena arena;
    private MemorySegment seg;
    private MemoryWord w32;
    private MemoryWord w64;

    @BeforeEach
    void setUp() {
        arena = Arena.ofConfined();
        seg = arena.allocate(512, 64);
        w32 = MemoryWord.word32(seg, 0, "flag32");
        w64 = MemoryWord.word64(seg, 8, "flag64");
    }

    @AfterEach
    void tearDown() {
        arena.close();
    }

    private static void assertMessage(Throwable e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), () -> "'" + e.getMessage() + "' lacks '" + p + "'");
        }
    }

    // ---- width checks ----

    @Test
    void write32OnA64BitWordIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new Memop.Write32(w64, 1, false));
        assertMessage(e, "WRITE32", "32-bit", "64-bit", "flag64");
    }

    @Test
    void write64OnA32BitWordIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new Memop.Write64(w32, 1, false));
        assertMessage(e, "WRITE64", "64-bit", "flag32");
        assertThrows(IllegalArgumentException.class, () -> new Memop.Write64(w32, 1, true, () -> { }));
    }

    @Test
    void wait32OnA64BitWordIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new Memop.Wait32(w64, 1, WaitCondition.EQ));
        assertMessage(e, "WAIT32", "flag64");
    }

    @Test
    void wait64OnA32BitWordIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new Memop.Wait64(w32, 1, WaitCondition.GEQ));
        assertMessage(e, "WAIT64", "64-bit", "32-bit", "flag32");
        assertThrows(IllegalArgumentException.class, () -> new Memop.Wait64(w32, 1, WaitCondition.GEQ, true));
    }

    @Test
    void nullsAreRejected() {
        assertThrows(NullPointerException.class, () -> new Memop.Write32(null, 1, false));
        assertThrows(NullPointerException.class, () -> new Memop.Write64(null, 1, false));
        assertThrows(NullPointerException.class, () -> new Memop.Wait32(null, 1, WaitCondition.EQ));
        assertThrows(NullPointerException.class, () -> new Memop.Wait32(w32, 1, null));
        assertThrows(NullPointerException.class, () -> new Memop.Wait64(w64, 1, null));
        assertThrows(NullPointerException.class, () -> new Memop.Barrier(null));
        assertThrows(NullPointerException.class, () -> new Memop.WriteMemory(null, 0, new byte[1], false));
        assertThrows(NullPointerException.class, () -> new Memop.WriteMemory(seg, 0, null, false));
    }

    @Test
    void shortConstructorsDefault() {
        Memop.Wait32 w = new Memop.Wait32(w32, 3, WaitCondition.AND);
        assertFalse(w.flush());
        assertEquals(new Memop.Wait32(w32, 3, WaitCondition.AND, false), w);
        assertFalse(new Memop.Wait64(w64, 3, WaitCondition.NOR).flush());
        Memop.Write64 d = new Memop.Write64(w64, 9, true);
        assertNull(d.doorbell());
        assertTrue(d.barrier());
        assertEquals(new Memop.Write64(w64, 9, true, null), d);
    }

    @Test
    void recordsCompareByValue() {
        assertEquals(new Memop.Write32(w32, 5, true), new Memop.Write32(w32, 5, true));
        assertNotEquals(new Memop.Write32(w32, 5, true), new Memop.Write32(w32, 5, false));
        assertNotEquals(new Memop.Write32(w32, 5, true), new Memop.Write32(w32, 6, true));
        assertEquals(new Memop.Wait64(w64, 5, WaitCondition.GEQ, true), new Memop.Wait64(w64, 5, WaitCondition.GEQ, true));
        assertNotEquals(new Memop.Wait64(w64, 5, WaitCondition.GEQ), new Memop.Wait64(w64, 5, WaitCondition.EQ));
        assertEquals(new Memop.Barrier(BarrierScope.SYSTEM), new Memop.Barrier(BarrierScope.SYSTEM));
        assertNotEquals(new Memop.Barrier(BarrierScope.SYSTEM), new Memop.Barrier(BarrierScope.DEVICE));
    }

    // ---- WRITE_MEMORY ----

    @Test
    void writeMemoryOfMoreThan256BytesIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new Memop.WriteMemory(seg, 0, new byte[257], false));
        assertMessage(e, "256", "257");
        assertEquals(256, Memop.MAX_WRITE_MEMORY_BYTES);
        assertEquals(256, new Memop.WriteMemory(seg, 0, new byte[256], false).length());
        assertEquals(0, new Memop.WriteMemory(seg, 512, new byte[0], false).length());
    }

    @Test
    void writeMemoryOutOfBoundsIsRejected() {
        var e = assertThrows(IndexOutOfBoundsException.class, () -> new Memop.WriteMemory(seg, 500, new byte[16], false));
        assertMessage(e, "16 bytes", "offset 500", "512 bytes");
        assertThrows(IndexOutOfBoundsException.class, () -> new Memop.WriteMemory(seg, -1, new byte[1], false));
        assertThrows(IndexOutOfBoundsException.class, () -> new Memop.WriteMemory(seg, 512, new byte[1], false));
        assertThrows(IndexOutOfBoundsException.class, () -> new Memop.WriteMemory(seg, Long.MAX_VALUE, new byte[1], false));
        new Memop.WriteMemory(seg, 496, new byte[16], false); // exactly fits
    }

    @Test
    void writeMemoryNeedsANativeSegment() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new Memop.WriteMemory(MemorySegment.ofArray(new byte[64]), 0, new byte[4], false));
        assertMessage(e, "native");
    }

    @Test
    void writeMemoryStagesItsBytes() {
        byte[] src = {1, 2, 3, 4};
        Memop.WriteMemory m = new Memop.WriteMemory(seg, 40, src, true);
        src[0] = 99; // the caller reuses its array
        assertArrayEquals(new byte[] {1, 2, 3, 4}, m.data());

        byte[] out = m.data();
        out[1] = 77; // data() hands out a copy
        assertArrayEquals(new byte[] {1, 2, 3, 4}, m.data());
        assertEquals(4, m.length());
        assertEquals(40, m.offset());
        assertSame(seg, m.target());
        assertTrue(m.barrier());
    }

    // ---- MemopBatch ----

    @Test
    void batchOfKeepsOrderAndCopiesTheArray() {
        Memop a = new Memop.Write32(w32, 1, false);
        Memop b = new Memop.Wait32(w32, 1, WaitCondition.EQ);
        Memop c = new Memop.Barrier(BarrierScope.SYSTEM);
        Memop[] arr = {a, b, c};
        MemopBatch batch = MemopBatch.of(arr);
        arr[0] = c;
        assertEquals(3, batch.size());
        assertSame(a, batch.get(0));
        assertSame(b, batch.get(1));
        assertSame(c, batch.get(2));
        assertEquals(List.of(a, b, c), batch);
    }

    @Test
    void batchOfTwoAndOfList() {
        Memop a = new Memop.Write32(w32, 1, false);
        Memop b = new Memop.Write64(w64, 2, true);
        MemopBatch two = MemopBatch.of(a, b);
        assertEquals(List.of(a, b), two);
        List<Memop> list = new ArrayList<>(List.of(b, a));
        MemopBatch fromList = MemopBatch.of(list);
        list.clear();
        assertEquals(List.of(b, a), fromList);
    }

    @Test
    void batchRejectsNullElements() {
        Memop a = new Memop.Write32(w32, 1, false);
        var e = assertThrows(NullPointerException.class, () -> MemopBatch.of(a, a, null));
        assertMessage(e, "ops[2] must not be null");
        var e2 = assertThrows(NullPointerException.class, () -> MemopBatch.of(a, (Memop) null));
        assertMessage(e2, "second must not be null");
        assertMessage(assertThrows(NullPointerException.class, () -> MemopBatch.of((Memop) null, a)), "first must not be null");
        assertMessage(assertThrows(NullPointerException.class, () -> MemopBatch.builder(1).add(null)), "op must not be null");
    }

    @Test
    void emptyBatches() {
        assertSame(MemopBatch.empty(), MemopBatch.of());
        assertSame(MemopBatch.empty(), MemopBatch.of(List.of()));
        assertSame(MemopBatch.empty(), MemopBatch.builder(4).build());
        assertTrue(MemopBatch.empty().isEmpty());
        assertThrows(IndexOutOfBoundsException.class, () -> MemopBatch.empty().get(0));
    }

    @Test
    void batchIsImmutable() {
        Memop a = new Memop.Write32(w32, 1, false);
        MemopBatch batch = MemopBatch.of(a, a, a);
        assertThrows(UnsupportedOperationException.class, () -> batch.add(a));
        assertThrows(UnsupportedOperationException.class, () -> batch.set(0, a));
        assertThrows(UnsupportedOperationException.class, () -> batch.remove(0));
        assertThrows(UnsupportedOperationException.class, batch::clear);
        assertEquals(3, batch.size());
    }

    @Test
    void builderCollectsInOrderAndGrows() {
        List<Memop> expected = new ArrayList<>();
        MemopBatch.Builder b = MemopBatch.builder(0);
        for (int i = 0; i < 10; i++) {
            Memop m = new Memop.Write32(w32, i, false);
            expected.add(m);
            b.add(m);
        }
        MemopBatch inner = MemopBatch.of(new Memop.Barrier(BarrierScope.DEVICE), new Memop.Write64(w64, 1, false));
        b.addAll(inner);
        expected.addAll(inner);
        Memop last = new Memop.Wait64(w64, 1, WaitCondition.GEQ);
        b.add(last);
        expected.add(last);
        MemopBatch built = b.build();
        assertEquals(expected, built);
        assertEquals(13, built.size());
    }

    @Test
    void builderAddAllOfALargeBatchIntoASmallBuilder() {
        Memop[] many = new Memop[50];
        for (int i = 0; i < many.length; i++) {
            many[i] = new Memop.Write32(w32, i, i % 2 == 0);
        }
        MemopBatch big = MemopBatch.of(many);
        MemopBatch built = MemopBatch.builder(2).add(new Memop.Barrier(BarrierScope.SYSTEM)).addAll(big).addAll(big).build();
        assertEquals(101, built.size());
        assertEquals(new Memop.Barrier(BarrierScope.SYSTEM), built.get(0));
        for (int i = 0; i < 50; i++) {
            assertSame(many[i], built.get(1 + i));
            assertSame(many[i], built.get(51 + i));
        }
    }

    @Test
    void batchEqualityIsListEquality() {
        Memop a = new Memop.Write32(w32, 1, false);
        Memop b = new Memop.Write32(w32, 2, false);
        MemopBatch x = MemopBatch.of(a, b);
        MemopBatch y = MemopBatch.builder(2).add(a).add(b).build();
        assertEquals(x, y);
        assertEquals(x.hashCode(), y.hashCode());
        assertEquals(x, List.of(a, b));
        assertEquals(x, MemopBatch.of(new Memop.Write32(w32, 1, false), new Memop.Write32(w32, 2, false)));
        assertNotEquals(x, MemopBatch.of(b, a));
        assertNotEquals(x, MemopBatch.of(a));
    }
}
