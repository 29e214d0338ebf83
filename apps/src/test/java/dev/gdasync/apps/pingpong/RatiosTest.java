package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ratios to the C peers and the targets against Open MPI. */
class RatiosTest {
    private static Result row(String mode, double bestRun, double p50, double medianRun) {
        return new Result(mode, 8, 1000, medianRun, new Latencies(1000, p50 / 2, p50, p50 * 2, p50 * 3, p50 * 4),
                new RunSpread(3, bestRun, medianRun * 1.1, 10));
    }

    private static String print(List<Result> rows) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Ratios.print(rows, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void everyModeAgainstTheFloorAndOpenMpiByThreeMeasures() {
        String out = print(List.of(row("floor", 0.050, 0.055, 0.060), row("ompi", 0.100, 0.110, 0.120),
                row("host", 0.150, 0.220, 0.240), row("sa", 0.290, 0.330, 0.480)));
        String host = out.lines().filter(l -> l.startsWith("host")).findFirst().orElseThrow();
        // best run 0.150: 3.00x the floor's 0.050, 1.50x Open MPI's 0.100; p50 0.220: 4.00x, 2.00x; median 0.240: 4.00x, 2.00x
        assertEquals(List.of("host", "8", "|", "0.150", "3.00", "1.50", "|", "0.220", "4.00", "2.00", "|", "0.240", "4.00", "2.00"),
                List.of(host.trim().split("\\s+")));
        assertTrue(out.contains("8 B one-way, host against Open MPI side by side: best run 1.50x, p50 2.00x; target <= 1.0x: NOT met"), out);
        assertTrue(out.contains("8 B one-way, sa against Open MPI side by side: best run 2.90x, p50 3.00x; target <= 3.0x: met"), out);
    }

    @Test
    void aMissingReferenceOrMeasureIsADash() {
        Result ucx = new Result("ucx", 8, 1000, 0.2, Latencies.medianOnly(3000, 0.1), new RunSpread(3, 0.15, 0.25, 50));
        String out = print(List.of(row("floor", 0.05, 0.05, 0.05), ucx));
        String line = out.lines().filter(l -> l.startsWith("ucx")).findFirst().orElseThrow();
        assertEquals(List.of("ucx", "8", "|", "0.150", "3.00", "-", "|", "0.100", "2.00", "-", "|", "0.200", "4.00", "-"),
                List.of(line.trim().split("\\s+")));
        assertTrue(!out.contains("target"), "no Open MPI row, no target: " + out);
        assertEquals("", print(List.of(row("host", 1, 1, 1))), "without a C peer, nothing");
    }
}
