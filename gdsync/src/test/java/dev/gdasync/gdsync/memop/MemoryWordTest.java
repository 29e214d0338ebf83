package dev.gdasync.gdsync.memop;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryWordTest {
    private Arena arena;
    private MemorySegment seg;

    @BeforeEach
    void setUp() {
        arena = Arena.ofConfined();
        seg = arena.allocate(64, 64);
    }

    @AfterEach
    void tearDown() {
        arena.close();
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 5, 6, 7, 58})
    void misaligned32IsRejected(long offset) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MemoryWord.word32(seg, offset, "w"));
        assertTrue(e.getMessage().contains("'w'") && e.getMessage().contains("not aligned to 4 bytes"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 4, 7, 12, 52})
    void misaligned64IsRejected(long offset) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MemoryWord.word64(seg, offset, "w64"));
        assertTrue(e.getMessage().contains("'w64'") && e.getMessage().contains("not aligned to 8 bytes"), e.getMessage());
    }

    @Test
    void alignedWordsAreAccepted() {
        for (long off = 0; off <= 60; off += 4) {
            assertEquals(off, MemoryWord.word32(seg, off, "w").offset());
        }
        for (long off = 0; off <= 56; off += 8) {
            assertEquals(off, MemoryWord.word64(seg, off, "w").offset());
        }
    }

    @Test
    void alignmentIsOfTheAddressNotTheOffset() {
        MemorySegment shifted = seg.asSlice(1);
        // offset 3 in a slice starting at byte 1 is address base + 4: aligned
        MemoryWord w = MemoryWord.word32(shifted, 3, "shifted");
        assertEquals(seg.address() + 4, w.address());
        assertThrows(IllegalArgumentException.class, () -> MemoryWord.word32(shifted, 0, "shifted"));
        assertThrows(IllegalArgumentException.class, () -> MemoryWord.word32(shifted, 4, "shifted"));
        assertEquals(seg.address() + 8, MemoryWord.word64(shifted, 7, "shifted64").address());
    }

    @Test
    void wordsOutsideTheSegmentAreRejected() {
        assertThrows(IndexOutOfBoundsException.class, () -> MemoryWord.word32(seg, 64, "w"));
        assertThrows(IndexOutOfBoundsException.class, () -> MemoryWord.word32(seg, -4, "w"));
        assertThrows(IndexOutOfBoundsException.class, () -> MemoryWord.word64(seg, 64, "w"));
        assertThrows(IndexOutOfBoundsException.class, () -> MemoryWord.word64(seg, -8, "w"));
        assertThrows(IndexOutOfBoundsException.class, () -> MemoryWord.word32(seg, Long.MAX_VALUE - 3, "w"));
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                () -> MemoryWord.word64(seg.asSlice(0, 60), 56, "tail"));
        assertTrue(e.getMessage().contains("'tail'") && e.getMessage().contains("60 bytes"), e.getMessage());
        // the last word that fits is accepted
        MemoryWord.word32(seg.asSlice(0, 60), 56, "last");
        MemoryWord.word64(seg, 56, "last64");
    }

    @Test
    void heapSegmentIsRejected() {
        MemorySegment heap = MemorySegment.ofArray(new long[8]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MemoryWord.word32(heap, 0, "heapword"));
        assertTrue(e.getMessage().contains("heap segment") && e.getMessage().contains("heapword"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> MemoryWord.word64(heap, 0, "heapword"));
    }

    @Test
    void nullsAreRejected() {
        assertThrows(NullPointerException.class, () -> MemoryWord.word32(null, 0, "w"));
        assertThrows(NullPointerException.class, () -> MemoryWord.word32(seg, 0, null));
        assertThrows(NullPointerException.class, () -> MemoryWord.word64(null, 0, "w"));
    }

    @Test
    void accessorsAndToString() {
        MemoryWord w = MemoryWord.word32(seg, 12, "doorbell record of QP 7");
        assertSame(seg, w.segment());
        assertEquals(12, w.offset());
        assertEquals(4, w.width());
        assertEquals("doorbell record of QP 7", w.name());
        assertEquals(seg.address() + 12, w.address());
        assertEquals("doorbell record of QP 7@0x" + Long.toHexString(seg.address() + 12), w.toString());

        MemoryWord d = MemoryWord.word64(seg, 16, "db");
        assertEquals(8, d.width());
        assertEquals("db@0x" + Long.toHexString(seg.address() + 16), d.toString());
    }

    @Test
    void set32AndGet32WithAndWithoutBarrier() {
        MemoryWord w = MemoryWord.word32(seg, 8, "w");
        w.set32(0xCAFEBABE, true);
        assertEquals(0xCAFEBABE, w.getAcquire32());
        assertEquals(0xCAFEBABE, seg.get(ValueLayout.JAVA_INT, 8));
        w.set32(-7, false);
        assertEquals(-7, w.getAcquire32());
        assertEquals(-7, seg.get(ValueLayout.JAVA_INT, 8));
        seg.set(ValueLayout.JAVA_INT, 8, 99);
        assertEquals(99, w.getAcquire32());
        // only the word's four bytes change
        assertEquals(0, seg.get(ValueLayout.JAVA_INT, 4));
        assertEquals(0, seg.get(ValueLayout.JAVA_INT, 12));
    }

    @Test
    void set64AndGet64WithAndWithoutBarrier() {
        MemoryWord w = MemoryWord.word64(seg, 24, "w64");
        w.set64(0x0123_4567_89AB_CDEFL, true);
        assertEquals(0x0123_4567_89AB_CDEFL, w.getAcquire64());
        assertEquals(0x0123_4567_89AB_CDEFL, seg.get(ValueLayout.JAVA_LONG, 24));
        w.set64(Long.MIN_VALUE, false);
        assertEquals(Long.MIN_VALUE, w.getAcquire64());
        assertEquals(Long.MIN_VALUE, seg.get(ValueLayout.JAVA_LONG, 24));
        assertEquals(0, seg.get(ValueLayout.JAVA_LONG, 16));
        assertEquals(0, seg.get(ValueLayout.JAVA_LONG, 32));
    }
}
