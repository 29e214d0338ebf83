package dev.gdasync.apps.pingpong;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CsvTest {
    @TempDir
    Path dir;

    @Test
    void headerAndRows() {
        List<String> lines = Csv.lines(List.of(
                new Result("host", 8, 10000, 0.25),
                new Result("sa", 4096, 10000, 0.5),
                new Result("mpj", 1048576, 100, 512.0)));
        assertEquals(List.of(
                "mode,bytes,iters,oneway_us,mbps,min_us,p50_us,p99_us,p99_9_us,max_us,run_min_us,run_max_us,spread_pct",
                "host,8,10000,0.2500,32.00,,,,,,,,",
                "sa,4096,10000,0.5000,8192.00,,,,,,,,",
                "mpj,1048576,100,512.0000,2048.00,,,,,,,,"), lines);
    }

    @Test
    void theNewColumnsComeAfterTheOldOnes() {
        assertTrue(Csv.HEADER.startsWith("mode,bytes,iters,oneway_us,mbps,"), "old readers read the first five columns");
    }

    @Test
    void everyRoundTripsDistributionAndTheRunsSpread() {
        Histogram h = new Histogram(3);
        for (int i = 1; i <= 1000; i++) {
            h.recordValue(1000 + i); // round trips of 1001..2000 ns: one-way 0.5005..1.0 us
        }
        // runs of 1000 round trips: 1.2, 1.6 and 2.0 ms; one-way 0.6, 0.8 and 1.0 us, median 0.8
        Result r = Result.of("host", 8, 1000, new long[]{1_600_000, 2_000_000, 1_200_000}, h);
        assertEquals(0.8, r.oneWayMicros(), 1e-12);
        assertEquals(new RunSpread(3, 0.6, 1.0, 50.0), round(r.runs()));
        assertEquals(1000, r.latencies().count());
        assertEquals(0.5005, r.latencies().min(), 1e-9);
        assertEquals(0.75, r.latencies().p50(), 0.001);
        assertEquals(0.995, r.latencies().p99(), 0.001);
        assertEquals(1.0, r.latencies().max(), 0.001);
        String[] cells = Csv.lines(List.of(r)).get(1).split(",", -1);
        assertEquals(13, cells.length);
        assertEquals("0.5005", cells[5]);
        assertEquals(r.latencies().p50(), Double.parseDouble(cells[6]), 1e-4);
        assertEquals(r.latencies().p999(), Double.parseDouble(cells[8]), 1e-4);
        assertEquals("0.6000", cells[10]);
        assertEquals("1.0000", cells[11]);
        assertEquals("50.0", cells[12]);
    }

    private static RunSpread round(RunSpread s) {
        return new RunSpread(s.runs(), Math.round(s.min() * 1e9) / 1e9, Math.round(s.max() * 1e9) / 1e9,
                Math.round(s.percent() * 1e6) / 1e6);
    }

    @Test
    void megabytesPerSecondAreBytesPerMicrosecond() {
        assertEquals(0.5, new Result("host", 1, 1, 2.0).megabytesPerSecond(), 1e-12); // 1 byte in 2 us
        assertEquals(1048576 / 20.0, new Result("host", 1048576, 1, 20.0).megabytesPerSecond(), 1e-9);
    }

    @Test
    void oneWayIsTheMedianRunOverTwiceTheIterations() {
        // runs of 1000 round trips: 2, 9 and 4 ms; median 4 ms = 4 us a round trip = 2 us one way
        Result r = Result.of("host", 8, 1000, new long[]{2_000_000, 9_000_000, 4_000_000});
        assertEquals(2.0, r.oneWayMicros(), 1e-12);
        assertEquals(2.5, Result.of("sa", 8, 1000, new long[]{4_000_000, 6_000_000}).oneWayMicros(), 1e-12);
    }

    @Test
    void writesTheFileAndMakesNoFolder() throws Exception {
        Path file = dir.resolve("pp.csv");
        Csv.write(List.of(new Result("host", 8, 10, 1.0)), file);
        assertEquals(List.of(Csv.HEADER, "host,8,10,1.0000,8.00,,,,,,,,"), Files.readAllLines(file));
        Path nowhere = dir.resolve("a/b/pp.csv");
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> Csv.write(List.of(), nowhere));
        assertEquals("could not write the CSV " + nowhere + ": java.nio.file.NoSuchFileException: " + nowhere, e.getMessage());
        assertFalse(Files.exists(dir.resolve("a")), "the command line checks the folder; writing makes none");
    }
}
