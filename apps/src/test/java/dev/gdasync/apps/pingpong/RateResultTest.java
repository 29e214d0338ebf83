package dev.gdasync.apps.pingpong;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RateResultTest {
    private static RateResult row(String mode, int bytes, double rate, double min, double max) {
        return new RateResult(mode, bytes, 64, 1000, rate, min, max, Double.NaN, Double.NaN);
    }

    @Test
    void theMedianRunsRateTheRangeAndTheWindowsPercentiles() {
        Histogram windows = new Histogram(3);
        for (int i = 1; i <= 100; i++) {
            windows.recordValue(i * 1000L); // windows of 1..100 us
        }
        // 64 x 1000 messages in 64, 32 and 16 ms: 1, 2 and 4 M msgs/s
        RateResult r = RateResult.of("host", 8, 64, 1000, new long[]{32_000_000, 64_000_000, 16_000_000}, windows);
        assertEquals(2e6, r.messagesPerSecond(), 1e-6);
        assertEquals(1e6, r.runMin(), 1e-6);
        assertEquals(4e6, r.runMax(), 1e-6);
        assertEquals(150.0, r.spreadPercent(), 1e-9);
        assertEquals(16.0, r.megabytesPerSecond(), 1e-9);
        assertEquals(50.0, r.windowP50Micros(), 0.1);
        assertEquals(99.0, r.windowP99Micros(), 0.1);
    }

    @Test
    void untimedWindowsLeaveTheirCellsEmpty() {
        RateResult r = RateResult.of("mpj", 4096, 64, 10, new long[]{1_000_000}, new Histogram(3));
        assertTrue(Double.isNaN(r.windowP50Micros()));
        assertEquals("mpj,4096,64,10,640000,2621.44,640000,640000,0.0,,", RateCsv.lines(List.of(r)).get(1));
    }

    @Test
    void theMpjChildsResultLineReadsBackAsTheSameRow() {
        RateResult r = new RateResult("mpj", 512, 64, 2000, 123456.5, 100000.25, 150000.75, 12.5, 80.25);
        assertEquals(r, MpjMessageRate.parse(MpjMessageRate.format(r)));
        assertThrows(IllegalArgumentException.class, () -> MpjMessageRate.parse(MpjMessageRate.RESULT + " 8 64"));
    }

    @Test
    void theTargetIsMetAtTwiceJucxsRateAndJudgedOnlyOnAQuietRun() {
        LoadSeen quiet = new LoadSeen(0.0, 0.0, 0.5, 2);
        List<RateResult> rows = List.of(row("host", 8, 2.5e6, 2.4e6, 2.6e6), row("sa", 8, 1.5e6, 1.45e6, 1.55e6),
                row("jucx", 8, 1e6, 0.99e6, 1.01e6), row("host", 64, 1e5, 1e5, 1e5));
        List<String> lines = RateReport.targets(rows, quiet);
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(0).startsWith("8 B message rate, host: 2500000 msgs/s = 2.50 x raw JUCX"), lines.get(0));
        assertTrue(lines.get(0).endsWith(": met"), lines.get(0));
        assertTrue(lines.get(1).endsWith("target >= 2.0 x: NOT met"), lines.get(1));
        List<RateResult> noisy = List.of(row("sa", 8, 1.5e6, 0.5e6, 1.55e6), row("jucx", 8, 1e6, 0.99e6, 1.01e6));
        String line = RateReport.targets(noisy, quiet).getFirst();
        assertTrue(line.contains("not judged, the run was too noisy: the runs spread 70 %"), line);
    }

    @Test
    void withUcxTheRateIsAlsoJudgedAgainstHalfOfUcxInCAndTheWindowTailAgainstItsMedian() {
        LoadSeen quiet = new LoadSeen(0.0, 0.0, 0.5, 2);
        List<RateResult> rows = List.of(new RateResult("host", 8, 64, 1000, 3e6, 2.9e6, 3.1e6, 20.0, 60.0),
                new RateResult("sa", 8, 64, 1000, 2e6, 1.95e6, 2.05e6, 30.0, 3000.0),
                row("ucx", 8, 5e6, 4.9e6, 5.1e6));
        List<String> lines = RateReport.targets(rows, quiet);
        assertEquals(List.of(
                "8 B message rate, host: 3000000 msgs/s (target >= 2 x raw JUCX: add --mode jucx to judge it)",
                "8 B message rate, host: 3000000 msgs/s = 0.60 x UCX in C's tag_bw (5000000 msgs/s), target >= 0.5 x: met",
                "8 B window tail, host: p99 60.0 us = 3.0 x the p50 (20.0 us), target <= 4 x: met",
                "8 B message rate, sa: 2000000 msgs/s (target >= 2 x raw JUCX: add --mode jucx to judge it)",
                "8 B message rate, sa: 2000000 msgs/s = 0.40 x UCX in C's tag_bw (5000000 msgs/s), target >= 0.5 x: NOT met",
                "8 B window tail, sa: p99 3000.0 us = 100.0 x the p50 (30.0 us), target <= 4 x: NOT met"), lines);
    }

    @Test
    void ucxPerftestsRateBecomesARunTimeOfTheWindowsMessages() {
        UcxRatePeer peer = new UcxRatePeer(new UcxPeer("ucx_perftest", new int[]{-1, -1}, 13337), 64);
        List<List<String>> cmds = peer.commands(8, 1000);
        assertEquals(2, cmds.size());
        String client = String.join(" ", cmds.get(1));
        assertTrue(client.contains("-t tag_bw") && client.contains("-n 64000") && client.contains("-s 8"), client);
        // 64 000 messages at 16 M msgs/s: 4 ms.
        CPeer.CPeerRun run = peer.parse("64000,0.040,0.060,0.062,120.5,123.0,16500000,16000000\n", 1000);
        assertEquals(4_000_000, run.totalNanos());
        assertEquals(0, run.tripNanos().length);
        assertThrows(IllegalArgumentException.class, () -> peer.parse("1000,0.04,0.06,0.06,1,1,1,1", 1000));
    }
}
