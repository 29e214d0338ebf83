package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PatternTest {

    @Test
    void whatIsFilledChecks() {
        for (int size : new int[]{1, 3, 7, 8, 9, 15, 16, 17, 4096, 65537}) {
            MemorySegment buf = MemorySegment.ofArray(new byte[size]);
            Pattern.fill(buf, 41, 1);
            Pattern.check(buf, 41, 1, size, "test");
            for (long k = 0; k < size; k++) {
                assertEquals(Pattern.expected(Pattern.seed(41, size, 1), k), buf.get(ValueLayout.JAVA_BYTE, k));
            }
        }
    }

    @Test
    void aWrongByteIsNamed() {
        MemorySegment buf = MemorySegment.ofArray(new byte[4096]);
        Pattern.fill(buf, 17, 0);
        byte was = buf.get(ValueLayout.JAVA_BYTE, 1234);
        buf.set(ValueLayout.JAVA_BYTE, 1234, (byte) ~was);
        Pattern.MismatchException e = assertThrows(Pattern.MismatchException.class, () -> Pattern.check(buf, 17, 0, 4096, "sa mode, rank 1"));
        assertEquals(17, e.iteration());
        assertEquals(1234, e.offset());
        assertEquals(String.format("sa mode, rank 1: validation failed at iteration 17, byte 1234 of 4096: expected 0x%02x, got 0x%02x",
                was & 0xff, ~was & 0xff), e.getMessage());
    }

    @Test
    void aWrongTailByteIsNamed() {
        MemorySegment buf = MemorySegment.ofArray(new byte[13]);
        Pattern.fill(buf, 2, 0);
        buf.set(ValueLayout.JAVA_BYTE, 12, (byte) (buf.get(ValueLayout.JAVA_BYTE, 12) + 1));
        assertEquals(12, assertThrows(Pattern.MismatchException.class, () -> Pattern.check(buf, 2, 0, -1, "x")).offset());
    }

    @Test
    void aStaleMessageOrTheWrongSenderFails() {
        MemorySegment buf = MemorySegment.ofArray(new byte[8]);
        Pattern.fill(buf, 5, 0);
        assertEquals(5 + 1, assertThrows(Pattern.MismatchException.class, () -> Pattern.check(buf, 6, 0, 8, "x")).iteration());
        assertThrows(Pattern.MismatchException.class, () -> Pattern.check(buf, 5, 1, 8, "x"));
        assertNotEquals(Pattern.seed(5, 8, 0), Pattern.seed(5, 16, 0), "the size is part of the pattern");
    }

    @Test
    void aShortMessageFails() {
        MemorySegment buf = MemorySegment.ofArray(new byte[64]);
        Pattern.fill(buf, 0, 1);
        Pattern.MismatchException e = assertThrows(Pattern.MismatchException.class, () -> Pattern.check(buf, 0, 1, 60, "host mode, rank 0"));
        assertEquals("host mode, rank 0: validation failed at iteration 0: received 60 bytes, expected 64", e.getMessage());
        assertEquals(-1, e.offset());
    }
}
