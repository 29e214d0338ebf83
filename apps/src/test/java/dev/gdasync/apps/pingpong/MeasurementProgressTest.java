package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The progress lines of a long ping-pong and their estimate of the time left. */
class MeasurementProgressTest {

    @Test
    void theEstimateCountsWarmUpsAndRunsStillToComeAtTheCostsMeasured() {
        // 2 modes, sizes 8 and 1024, 1000 round trips x 3 runs, warm-ups of 3 s (first) and 1 s (each size).
        PingPongOptions o = PingPongOptions.parse("--sizes", "8,1024", "--iters", "1000", "--reps", "3", "--warmup", "3");
        MeasurementProgress p = MeasurementProgress.to(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), o,
                List.of("host", "sa"), 1e9);
        assertTrue(Double.isNaN(p.secondsLeft(0, 2, 0)), "nothing measured, no estimate");
        p.ran(8, 1000, 2_000_000);      // 2 us a round trip at 8 B
        assertEquals(2000, p.nanosPerRoundTrip(8), 1e-9);
        assertEquals(2000 + 1016 * 0.5, p.nanosPerRoundTrip(1024), 1e-9, "one size known: its cost plus the guess per byte");
        p.ran(1024, 1000, 6_000_000);   // 6 us at 1 KiB
        assertEquals(6000, p.nanosPerRoundTrip(1024), 1e-9);
        assertEquals(6000 + 4 * 1024 * 4000.0 / 1016, p.nanosPerRoundTrip(5 * 1024), 1e-6, "drawn through the sizes measured");
        // Timing size 8, 2 of its 6 runs done: 4 runs of 2 ms, then size 1024: 2 warm-ups of 1 s and 6 runs of 6 ms.
        assertEquals(4 * 0.002 + 2 * 1.0 + 6 * 0.006, p.secondsLeft(0, 2, 2), 1e-9);
        // In mode 1's first warm-up: its 3 s, both warm-ups of size 8, all runs of both sizes, the warm-ups of 1024.
        assertEquals(3 + 2 * 1.0 + 6 * 0.002 + 2 * 1.0 + 6 * 0.006, p.secondsLeft(0, -2, 0), 1e-9);
    }

    @Test
    void linesNameTheModeTheSizeTheRunAndTheTimeLeft() {
        PingPongOptions o = PingPongOptions.parse("--sizes", "8,4096", "--iters", "100", "--reps", "5", "--warmup", "0");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        MeasurementProgress p = MeasurementProgress.to(new PrintStream(bytes, true, StandardCharsets.UTF_8), o,
                List.of("host", "sa"), 0);
        p.warming(0, 0, true);
        p.ran(8, 100, 1_000_000);
        p.timing(1, 1, 2);
        assertEquals(List.of("progress: warming up host, 8 B (size 1 of 2); estimating the time left",
                "progress: sa 4096 B, run 3 of 5 (size 2 of 2); about 0 s left"),
                bytes.toString(StandardCharsets.UTF_8).lines().toList());
    }
}
