package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReportTest {
    private static final Latencies HOST = new Latencies(50_000, 0.231, 0.284, 0.397, 11.424, 308.0);
    private static final LoadSeen QUIET = new LoadSeen(0.02, 0.1, 2.1, 2);

    private static String printed(java.util.function.Consumer<PrintStream> body) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            body.accept(out);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theTableShowsThePercentilesAndTheRunsSpread() {
        List<Result> rows = List.of(new Result("host", 8, 10000, 0.327, HOST, new RunSpread(5, 0.315, 0.333, 5.5)),
                new Result("ki", 8, 10000, 0.6));
        String table = printed(out -> Report.table(rows, out));
        assertEquals("""
                mode       bytes    iters  oneway_us        MB/s |      min      p50      p99    p99.9       max |  run_min  run_max spread
                host           8    10000      0.327        24.5 |    0.231    0.284    0.397   11.424     308.0 |    0.315    0.333     6%
                ki             8    10000      0.600        13.3 |        -        -        -        -         - |        -        -      -
                """, table);
    }

    @Test
    void aTargetMissedOnAQuietRunIsNotMet() {
        PingPongOptions o = PingPongOptions.parse();
        Result r = new Result("host", 8, 10000, 0.327, HOST, new RunSpread(5, 0.315, 0.333, 5.5));
        assertEquals("8 B one-way, host: 0.327 us (p50 0.284 us), target <= 0.3 us: NOT met\n",
                printed(out -> Report.target(out, "8 B one-way, host", r, 0.3, o, QUIET)));
    }

    @Test
    void aTargetMissedOnANoisyRunIsNotJudgedAndSaysWhy() {
        PingPongOptions o = PingPongOptions.parse();
        Result spread = new Result("host", 8, 10000, 0.344, HOST, new RunSpread(5, 0.339, 0.755, 121));
        assertEquals("8 B one-way, host: 0.344 us (p50 0.284 us), target <= 0.3 us: not judged, the run was too noisy:"
                        + " its runs spread 121 % (0.339 to 0.755 us)\n",
                printed(out -> Report.target(out, "8 B one-way, host", spread, 0.3, o, QUIET)));
        Result steady = new Result("host", 8, 10000, 0.344, HOST, new RunSpread(5, 0.339, 0.350, 3));
        String busy = printed(out -> Report.target(out, "8 B one-way, host", steady, 0.3, o, new LoadSeen(0.9, 4.0, 3.5, 2)));
        assertEquals("8 B one-way, host: 0.344 us (p50 0.284 us), target <= 0.3 us: not judged, the run was too noisy:"
                + " other processes kept 0.90 of 2 CPUs busy (load average 3.50); the hypervisor stole 4.0 % of the CPU"
                + " time\n", busy);
    }

    @Test
    void aTargetMetIsMetWhateverTheNoise() {
        PingPongOptions o = PingPongOptions.parse();
        Result r = new Result("sa", 8, 10000, 0.7, HOST, new RunSpread(5, 0.6, 1.9, 180));
        assertTrue(printed(out -> Report.target(out, "8 B one-way, sa", r, 1.2, o, new LoadSeen(1.5, 9, 4, 2)))
                .endsWith("target <= 1.2 us: met\n"));
    }
}
