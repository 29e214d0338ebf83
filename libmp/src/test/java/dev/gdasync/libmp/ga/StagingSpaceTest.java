package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.testutil.FuzzSeeds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The GA runtime's staging bookkeeping against a model, in random sequences of reserve, finish (release) and grow,
 * as {@code GlobalArrays.reserve} drives it (when a part does not fit: finish everything, grow if the part is larger
 * than the memory, reserve again). After every step the parts held are disjoint and inside the space, a reserve
 * fails exactly when the part does not fit after the highest part held since the space was last empty, and the
 * space is free again once nothing is held. {@value #SEQUENCES} sequences by default; see {@link FuzzSeeds}.
 */
class StagingSpaceTest {
    private static final int SEQUENCES = 500;
    private static final int STEPS = 300;

    static LongStream seeds() {
        return FuzzSeeds.seeds(SEQUENCES);
    }

    @Test
    void partsFollowEachOtherAndTheSpaceIsFreeWhenNothingIsHeld() {
        StagingSpace s = new StagingSpace(100);
        assertEquals(0, s.reserve(40));
        assertEquals(40, s.reserve(60));
        assertEquals(-1, s.reserve(1));
        assertThrows(IllegalStateException.class, () -> s.grow(200), "parts are held");
        s.release();
        assertEquals(-1, s.reserve(1), "the first part's end is only free once every part is");
        s.release();
        assertEquals(0, s.used());
        assertThrows(IllegalStateException.class, s::release);
        s.grow(200);
        assertEquals(0, s.reserve(200));
        assertThrows(IllegalArgumentException.class, () -> s.reserve(0));
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void randomSequencesNeverOverlapOrLeaveTheSpace(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long capacity = random.nextLong(1, 4096);
        StagingSpace space = new StagingSpace(capacity);
        List<long[]> held = new ArrayList<>();
        long modelEnd = 0;
        List<String> log = new ArrayList<>();
        try {
            for (int step = 0; step < STEPS; step++) {
                if (random.nextInt(10) < 6 || held.isEmpty()) {
                    long bytes = random.nextInt(8) == 0 ? random.nextLong(1, 2 * capacity + 2)
                            : random.nextLong(1, Math.max(2, capacity / 4));
                    log.add("reserve " + bytes);
                    long at = space.reserve(bytes);
                    boolean fits = bytes <= capacity - modelEnd;
                    assertEquals(fits, at >= 0, "whether " + bytes + " bytes fit after " + modelEnd + " of " + capacity);
                    if (at < 0) {
                        // What GlobalArrays.reserve does next: finish every holder, grow if needed, reserve again.
                        log.add("finish all (" + held.size() + ")");
                        for (int i = 0; i < held.size(); i++) {
                            space.release();
                        }
                        held.clear();
                        modelEnd = 0;
                        assertEquals(0, space.used());
                        if (capacity < bytes) {
                            capacity = Math.max(bytes, 2 * capacity);
                            log.add("grow to " + capacity);
                            space.grow(capacity);
                        }
                        at = space.reserve(bytes);
                        assertEquals(0, at, "an empty space gives its start");
                    } else {
                        assertEquals(modelEnd, at, "a part follows the parts held");
                    }
                    held.add(new long[] {at, bytes});
                    modelEnd = at + bytes;
                } else {
                    int i = random.nextInt(held.size());
                    log.add("finish " + i);
                    held.remove(i);
                    space.release();
                    if (held.isEmpty()) {
                        modelEnd = 0;
                    }
                }
                check(space, held, capacity);
            }
        } catch (AssertionError e) {
            fail("seed=" + seed + ", after " + log.size() + " steps, the last: "
                    + log.subList(Math.max(0, log.size() - 12), log.size()) + ": " + e.getMessage(), e);
        }
    }

    private static void check(StagingSpace space, List<long[]> held, long capacity) {
        assertEquals(capacity, space.capacity());
        assertEquals(held.size(), space.holders());
        List<long[]> sorted = new ArrayList<>(held);
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        long end = 0;
        for (long[] p : sorted) {
            assertTrue(p[0] >= end, "part at " + p[0] + " overlaps the one before, which ends at " + end);
            end = p[0] + p[1];
            assertTrue(end <= capacity, "part at " + p[0] + " of " + p[1] + " bytes ends past " + capacity);
            assertTrue(end <= space.used(), "part at " + p[0] + " lies past the space's used mark");
        }
        if (held.isEmpty()) {
            assertEquals(0, space.used(), "nothing held, yet the space is not free");
        }
    }
}
