package dev.gdasync.apps.common;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JitActivityTest {
    /** One rank: it is rank 0 and all the ranks. */
    private static final JitActivity.Ranks ALONE = JitActivity.Ranks.of(mine -> mine, mine -> mine);

    @AfterEach
    void clearProperty() {
        System.clearProperty(JitActivity.MAX_SETTLE_PROPERTY);
    }

    @Test
    void settlingRunsPassesOverWholeStretchesAndSaysHowItEnded() {
        AtomicInteger passes = new AtomicInteger();
        long start = System.nanoTime();
        String line = JitActivity.settle(ALONE, passes::incrementAndGet, 0.5);
        long took = System.nanoTime() - start;
        assertTrue(passes.get() > 1, "passes ran until a stretch was over: " + passes.get());
        assertTrue(took >= JitActivity.STRETCH_NANOS, "at least one whole stretch: " + took + " ns");
        assertTrue(took < 4 * 0.5e9 + 2 * JitActivity.STRETCH_NANOS + 1e9, "four times the warm-up at most: " + took + " ns");
        assertTrue(line.matches("warm-up: [0-9.]+ s more after the timed warm-up until the JIT was quiet .*")
                || line.matches("warm-up: the JIT was still compiling [0-9.]+ s after the timed warm-up .*: the runs may be noisy"),
                line);
    }

    @Test
    void aZeroLimitSettlesNothing() {
        System.setProperty(JitActivity.MAX_SETTLE_PROPERTY, "0");
        AtomicInteger passes = new AtomicInteger();
        String line = JitActivity.settle(ALONE, passes::incrementAndGet, 10);
        assertEquals(0, passes.get());
        assertTrue(line.startsWith("warm-up: the JIT was still compiling 0.0 s after"), line);
    }

    @Test
    void aLimitThatIsNoNumberIsRefusedByName() {
        System.setProperty(JitActivity.MAX_SETTLE_PROPERTY, "soon");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JitActivity.settle(ALONE, () -> { }, 1));
        assertEquals("gdasync.warmup.settle.seconds must be a number of seconds, not 'soon'", e.getMessage());
    }

    @Test
    void theShareOfACpuCountsCompileTimeOverWallTime() {
        JitActivity jit = new JitActivity();
        double share = jit.shareSinceMark();
        assertTrue(share >= 0, "never negative: " + share);
        assertEquals("2 %", JitActivity.percent(JitActivity.QUIET_SHARE));
    }
}
