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
}
