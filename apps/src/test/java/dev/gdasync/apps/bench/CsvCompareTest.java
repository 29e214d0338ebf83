package dev.gdasync.apps.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CsvCompareTest {
    @TempDir
    Path dir;

    private CsvCompare.Table table(String name, String... lines) throws IOException {
        return CsvCompare.Table.read(Files.write(dir.resolve(name), List.of(lines)));
    }

    @Test
    void mediansPerSideRatiosAndOnlyTheColumnsBothHave() throws IOException {
        // An older pingpong CSV without the percentile columns, three rounds; the new one with them, three rounds.
        List<CsvCompare.Table> old = List.of(
                table("o1", "mode,bytes,iters,oneway_us,mbps", "host,8,100,0.40,20", "sa,8,100,1.0,8"),
                table("o2", "mode,bytes,iters,oneway_us,mbps", "host,8,100,0.20,40", "sa,8,100,9.0,1"),
                table("o3", "mode,bytes,iters,oneway_us,mbps", "host,8,100,0.30,27", "sa,8,100,1.2,7"));
        List<CsvCompare.Table> now = List.of(
                table("n1", "mode,bytes,iters,oneway_us,mbps,min_us,p50_us", "host,8,100,0.15,53,0.1,0.14", "sa,8,100,0.6,13,0.5,0.55"),
                table("n2", "mode,bytes,iters,oneway_us,mbps,min_us,p50_us", "host,8,100,0.10,80,0.1,0.09", "sa,8,100,0.6,13,0.5,0.58"),
                table("n3", "mode,bytes,iters,oneway_us,mbps,min_us,p50_us", "host,8,100,0.12,66,0.1,0.11", "sa,8,100,0.7,11,0.5,0.6"));
        List<CsvCompare.Line> lines = CsvCompare.compare(old, now);
        assertEquals(2, lines.size(), lines.toString());
        CsvCompare.Line host = lines.get(0);
        assertEquals("host,8", host.key());
        assertEquals("oneway_us", host.column());
        assertEquals(0.30, host.old(), 1e-12);
        assertEquals(0.12, host.now(), 1e-12);
        assertEquals(0.4, host.ratio(), 1e-9);
        assertEquals(2.5, host.speedup(), 1e-9);
        assertEquals(1.2, lines.get(1).old(), 1e-12, "the median ignores the 9.0 us outlier");
    }

    @Test
    void aRateIsFasterWhenHigher() throws IOException {
        List<CsvCompare.Line> lines = CsvCompare.compare(
                List.of(table("o", "mode,bytes,window,iters,msgs_per_s", "host,8,64,10,1000000")),
                List.of(table("n", "mode,bytes,window,iters,msgs_per_s", "host,8,64,10,3000000", "sa,8,64,10,5")));
        assertEquals(1, lines.size(), "sa has no old value: " + lines);
        assertEquals(3.0, lines.getFirst().speedup(), 1e-12);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CsvCompare.print(lines, "abc123", "working tree", 1, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("old = abc123, new = working tree; each value the median of 1 round per side"), text);
        assertTrue(text.lines().anyMatch(l -> l.matches("host +8 msgs_per_s +1000000 +3000000 +3\\.000 +3\\.00x")), text);
    }
}
