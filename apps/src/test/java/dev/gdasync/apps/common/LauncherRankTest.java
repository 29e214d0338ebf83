package dev.gdasync.apps.common;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LauncherRankTest {
    @Test
    void theFirstVariableSetCounts() {
        assertEquals(2, LauncherRank.first(Map.of("B", " 2 ", "C", "5"), "A", "B", "C"));
        assertEquals(-1, LauncherRank.first(Map.of(), "A", "B"));
        assertEquals(-1, LauncherRank.first(Map.of("A", "x", "B", "1"), "A", "B"));
    }
}
