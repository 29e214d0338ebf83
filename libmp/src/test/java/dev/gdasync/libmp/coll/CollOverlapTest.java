package dev.gdasync.libmp.coll;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** OMB's overlap formula. */
class CollOverlapTest {
    @Test
    void matchesTheIssuesExamples() {
        assertEquals(75.0, Overlap.percent(12, 10, 0.5, 10), 1e-9);
        assertEquals(100.0, Overlap.percent(9, 10, 0, 10), 1e-9);
        assertEquals(0.0, Overlap.percent(30, 10, 0, 10), 1e-9);
    }

    @Test
    void refusesTimesThatAreNotTimes() {
        assertEquals("pure must be > 0, got 0",
                assertThrows(IllegalArgumentException.class, () -> Overlap.percent(1, 1, 0, 0)).getMessage());
        assertEquals("test must be a finite time >= 0, got NaN",
                assertThrows(IllegalArgumentException.class, () -> Overlap.percent(1, 1, Double.NaN, 1)).getMessage());
    }
}
