package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
                "mode,bytes,iters,oneway_us,mbps",
                "host,8,10000,0.2500,32.00",
                "sa,4096,10000,0.5000,8192.00",
                "mpj,1048576,100,512.0000,2048.00"), lines);
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
        assertEquals(List.of("mode,bytes,iters,oneway_us,mbps", "host,8,10,1.0000,8.00"), Files.readAllLines(file));
        Path nowhere = dir.resolve("a/b/pp.csv");
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> Csv.write(List.of(), nowhere));
        assertEquals("could not write the CSV " + nowhere + ": java.nio.file.NoSuchFileException: " + nowhere, e.getMessage());
        assertFalse(Files.exists(dir.resolve("a")), "the command line checks the folder; writing makes none");
    }
}
