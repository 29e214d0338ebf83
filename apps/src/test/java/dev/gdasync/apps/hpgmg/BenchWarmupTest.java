package dev.gdasync.apps.hpgmg;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The time-based warm-up's decisions, fed with synthetic round times (no clock). */
class BenchWarmupTest {
    private static final long MS = 1_000_000L;

    /** Runs rounds of the given durations until the warm-up says stop; returns how many rounds ran. */
    private static int roundsUntilStop(Bench.Warmup w, long start, java.util.function.IntToLongFunction roundNanos, int limit) {
        long now = start;
        for (int i = 0; i < limit; i++) {
            now += roundNanos.applyAsLong(i);
            if (!w.goOn(now)) {
                return i + 1;
            }
        }
        return limit;
    }

    @Test
    void steadyRoundsStopSoonAfterTheMinimumTime() {
        // 100 ms rounds, 5 s minimum: 50 rounds reach 5 s; the block ending at or after it is settled.
        int rounds = roundsUntilStop(new Bench.Warmup(5, 0), 0, i -> 100 * MS, 10_000);
        assertTrue(rounds >= 50 && rounds <= 50 + Bench.Warmup.BLOCK + 1, "stopped after " + rounds + " rounds");
    }

    @Test
    void roundsStillGettingFasterKeepTheWarmupGoingPastTheMinimum() {
        // Each block of 25 rounds is 20 % faster than the one before until round 200 (1.04 s in all), then steady.
        int rounds = roundsUntilStop(new Bench.Warmup(1, 0), 0,
                i -> (long) (10 * MS * Math.pow(0.8, Math.min(i, 200) / Bench.Warmup.BLOCK)), 10_000);
        assertTrue(rounds > 200, "went on while the rounds got faster: stopped after " + rounds);
        assertTrue(rounds <= 200 + 2 * Bench.Warmup.BLOCK + 1, "stopped once they were steady: " + rounds);
    }

    @Test
    void aWarmupThatNeverSettlesEndsAtFourTimesTheMinimum() {
        // Every block 20 % faster than the last (never settled): the warm-up stops at 4 x 2 s = 8 s.
        long[] elapsed = {0};
        int rounds = roundsUntilStop(new Bench.Warmup(2, 0), 0, i -> {
            long d = Math.max(1, (long) (100 * MS * Math.pow(0.8, i / Bench.Warmup.BLOCK)));
            elapsed[0] += d;
            return d;
        }, 1_000_000);
        assertTrue(elapsed[0] >= 8_000 * MS && elapsed[0] < 8_000 * MS + 100 * MS, "ended at " + elapsed[0] / MS + " ms after " + rounds + " rounds");
    }

    @Test
    void theFirstBlockStartsAtTheFirstCallNotAtConstruction() {
        // A long gap before the first call (the fixed --solves rounds) does not make the first block look slow.
        Bench.Warmup w = new Bench.Warmup(5, 0);
        long now = 4_900 * MS;
        assertTrue(w.goOn(now));
        int rounds = 1;
        while (w.goOn(now += 10 * MS)) {
            rounds++;
        }
        assertEquals(2 * Bench.Warmup.BLOCK, rounds, "two equal blocks after the first call, the second one settled");
    }
}
