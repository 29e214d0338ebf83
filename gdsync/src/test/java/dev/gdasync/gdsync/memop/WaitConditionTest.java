package dev.gdasync.gdsync.memop;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.SplittableRandom;
import java.util.stream.Stream;

import static dev.gdasync.gdsync.memop.WaitCondition.AND;
import static dev.gdasync.gdsync.memop.WaitCondition.EQ;
import static dev.gdasync.gdsync.memop.WaitCondition.GEQ;
import static dev.gdasync.gdsync.memop.WaitCondition.NOR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** Table-driven checks of every wait condition, on 32-bit and 64-bit values. */
class WaitConditionTest {

    static Stream<Arguments> cases32() {
        return Stream.of(
                // GEQ: (signed)(x - v) >= 0
                arguments(GEQ, 5, 5, true),
                arguments(GEQ, 6, 5, true),
                arguments(GEQ, 4, 5, false),
                arguments(GEQ, 0, 0, true),
                arguments(GEQ, 1, 0, true),
                arguments(GEQ, 0, 1, false),
                arguments(GEQ, 0x00000002, 0xFFFFFFFE, true),   // counter wrapped past v
                arguments(GEQ, 0xFFFFFFFE, 0x00000002, false),  // not yet wrapped to v
                arguments(GEQ, 0x00000000, 0xFFFFFFFF, true),   // one step past wrap
                arguments(GEQ, 0xFFFFFFFF, 0x00000000, false),  // one step before wrap
                arguments(GEQ, 0xFFFFFFFF, 0xFFFFFFFF, true),
                arguments(GEQ, Integer.MIN_VALUE, Integer.MAX_VALUE, true),  // MIN is one step after MAX
                arguments(GEQ, Integer.MAX_VALUE, Integer.MIN_VALUE, false),
                arguments(GEQ, Integer.MAX_VALUE, 0, true),                  // distance 2^31 - 1: ahead
                arguments(GEQ, Integer.MIN_VALUE, 0, false),                 // distance 2^31: behind by sign
                arguments(GEQ, 0, Integer.MIN_VALUE, false),
                arguments(GEQ, Integer.MIN_VALUE, Integer.MIN_VALUE, true),
                arguments(GEQ, Integer.MAX_VALUE, Integer.MAX_VALUE, true),
                // EQ: x == v
                arguments(EQ, 5, 5, true),
                arguments(EQ, 5, 6, false),
                arguments(EQ, 6, 5, false),
                arguments(EQ, 0, 0, true),
                arguments(EQ, 0xFFFFFFFF, -1, true),
                arguments(EQ, Integer.MIN_VALUE, Integer.MAX_VALUE, false),
                arguments(EQ, Integer.MIN_VALUE, Integer.MIN_VALUE, true),
                arguments(EQ, 0x00000002, 0xFFFFFFFE, false),  // GEQ would pass: EQ keeps its meaning
                // AND: (x & v) != 0
                arguments(AND, 0b1010, 0b0010, true),
                arguments(AND, 0b1010, 0b0101, false),
                arguments(AND, 0b1010, 0b1111, true),
                arguments(AND, 0xFFFFFFFF, 0, false),          // v = 0 never passes
                arguments(AND, 0, 0, false),
                arguments(AND, Integer.MIN_VALUE, 0, false),
                arguments(AND, 0, 0xFFFFFFFF, false),
                arguments(AND, Integer.MIN_VALUE, Integer.MIN_VALUE, true),  // sign bit alone
                arguments(AND, Integer.MAX_VALUE, Integer.MIN_VALUE, false),
                arguments(AND, 0xFFFFFFFF, 0xFFFFFFFF, true),
                // NOR: ~(x | v) != 0
                arguments(NOR, 0, 0, true),
                arguments(NOR, 0b1010, 0b0101, true),
                arguments(NOR, 0xFFFFFFFF, 0, false),          // x | v all ones
                arguments(NOR, 0, 0xFFFFFFFF, false),
                arguments(NOR, 0xFFFF0000, 0x0000FFFF, false),
                arguments(NOR, 0xAAAAAAAA, 0x55555555, false),
                arguments(NOR, 0xFFFF0000, 0x0000FFFE, true),  // bit 0 clear in both
                arguments(NOR, Integer.MAX_VALUE, 0, true),    // only the sign bit clear in both
                arguments(NOR, Integer.MAX_VALUE, Integer.MIN_VALUE, false),
                arguments(NOR, Integer.MIN_VALUE, 0, true));
    }

    static Stream<Arguments> cases64() {
        return Stream.of(
                // GEQ: (signed)(x - v) >= 0 on 64 bits
                arguments(GEQ, 5L, 5L, true),
                arguments(GEQ, 6L, 5L, true),
                arguments(GEQ, 4L, 5L, false),
                arguments(GEQ, 0L, 0L, true),
                arguments(GEQ, 2L, 0xFFFFFFFFFFFFFFFEL, true),   // wrapped past v
                arguments(GEQ, 0xFFFFFFFFFFFFFFFEL, 2L, false),
                arguments(GEQ, 0L, -1L, true),
                arguments(GEQ, -1L, 0L, false),
                arguments(GEQ, Long.MIN_VALUE, Long.MAX_VALUE, true),
                arguments(GEQ, Long.MAX_VALUE, Long.MIN_VALUE, false),
                arguments(GEQ, Long.MAX_VALUE, 0L, true),
                arguments(GEQ, Long.MIN_VALUE, 0L, false),
                arguments(GEQ, 0L, Long.MIN_VALUE, false),
                // values a 32-bit comparison would get wrong
                arguments(GEQ, 0x1_0000_0000L, 0xFFFF_FFFFL, true),
                arguments(GEQ, 0x0000_0002L, 0xFFFF_FFFEL, false),  // no 32-bit wrap on a 64-bit word
                arguments(GEQ, 0x8000_0000L, 0L, true),             // 2^31 ahead is still ahead on 64 bits
                // EQ
                arguments(EQ, 5L, 5L, true),
                arguments(EQ, 5L, 6L, false),
                arguments(EQ, Long.MIN_VALUE, Long.MIN_VALUE, true),
                arguments(EQ, Long.MIN_VALUE, Long.MAX_VALUE, false),
                arguments(EQ, 0x1_0000_0005L, 5L, false),           // upper half counts
                arguments(EQ, -1L, 0xFFFF_FFFFL, false),
                // AND
                arguments(AND, 0b1010L, 0b0010L, true),
                arguments(AND, 0b1010L, 0b0101L, false),
                arguments(AND, -1L, 0L, false),                     // v = 0 never passes
                arguments(AND, 0L, 0L, false),
                arguments(AND, 0L, -1L, false),
                arguments(AND, 0x1_0000_0000L, 0x1_0000_0000L, true),   // a bit above 32
                arguments(AND, 0x1_0000_0000L, 0xFFFF_FFFFL, false),
                arguments(AND, Long.MIN_VALUE, Long.MIN_VALUE, true),
                arguments(AND, Long.MAX_VALUE, Long.MIN_VALUE, false),
                // NOR
                arguments(NOR, 0L, 0L, true),
                arguments(NOR, -1L, 0L, false),                     // x | v all ones
                arguments(NOR, 0L, -1L, false),
                arguments(NOR, 0xFFFF_FFFFL, 0xFFFF_FFFF_0000_0000L, false),
                arguments(NOR, 0xFFFF_FFFFL, 0L, true),             // upper half clear in both
                arguments(NOR, 0xAAAA_AAAA_AAAA_AAAAL, 0x5555_5555_5555_5555L, false),
                arguments(NOR, Long.MAX_VALUE, 0L, true),
                arguments(NOR, Long.MAX_VALUE, Long.MIN_VALUE, false));
    }

    @ParameterizedTest(name = "{0}: x={1} v={2} -> {3}")
    @MethodSource("cases32")
    void condition32(WaitCondition cond, int x, int v, boolean expected) {
        assertEquals(expected, cond.test(x, v),
                () -> cond + " x=0x" + Integer.toHexString(x) + " v=0x" + Integer.toHexString(v));
    }

    @ParameterizedTest(name = "{0}: x={1} v={2} -> {3}")
    @MethodSource("cases64")
    void condition64(WaitCondition cond, long x, long v, boolean expected) {
        assertEquals(expected, cond.test(x, v),
                () -> cond + " x=0x" + Long.toHexString(x) + " v=0x" + Long.toHexString(v));
    }

    /** GEQ around any start point: reaching or passing v by less than 2^31 passes; being behind fails. */
    @Test
    void geqIsWrapAroundSafeFromAnyStart32() {
        SplittableRandom r = new SplittableRandom(42);
        for (int i = 0; i < 10_000; i++) {
            int v = r.nextInt();
            int ahead = r.nextInt(0, Integer.MAX_VALUE);   // 0 .. 2^31 - 2
            int behind = r.nextInt(1, Integer.MAX_VALUE);  // 1 .. 2^31 - 2
            assertTrue(GEQ.test(v + ahead, v), "v=" + v + " ahead=" + ahead);
            assertFalse(GEQ.test(v - behind, v), "v=" + v + " behind=" + behind);
        }
    }

    @Test
    void geqIsWrapAroundSafeFromAnyStart64() {
        SplittableRandom r = new SplittableRandom(43);
        for (int i = 0; i < 10_000; i++) {
            long v = r.nextLong();
            long ahead = r.nextLong(0, Long.MAX_VALUE);
            long behind = r.nextLong(1, Long.MAX_VALUE);
            assertTrue(GEQ.test(v + ahead, v), "v=" + v + " ahead=" + ahead);
            assertFalse(GEQ.test(v - behind, v), "v=" + v + " behind=" + behind);
        }
    }

    @Test
    void codesAreLibGdsyncs() {
        assertEquals(0, GEQ.code());
        assertEquals(1, EQ.code());
        assertEquals(2, AND.code());
        assertEquals(3, NOR.code());
    }

    @ParameterizedTest
    @EnumSource(WaitCondition.class)
    void ofCodeRoundTrips(WaitCondition c) {
        assertSame(c, WaitCondition.ofCode(c.code()));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 4, 5, 100, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void unknownCodeIsRejected(int code) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WaitCondition.ofCode(code));
        assertTrue(e.getMessage().contains("unknown wait condition code " + code), e.getMessage());
    }
}
