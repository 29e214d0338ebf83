package dev.gdasync.apps.shmembench;

import dev.gdasync.apps.shmemrun.AppProcesses;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The benchmark end to end on 2 PE processes, small: every case measured, every data check passed, CSV and plot. */
@Timeout(300)
class ShmemBenchTest {
    @TempDir
    Path dir;

    @Test
    void everyCaseRunsWithItsDataCheckedAndIsWritten() throws Exception {
        Path csv = dir.resolve("s.csv");
        Path png = dir.resolve("s.png");
        String out = AppProcesses.run("shmembench", 2, "--max-size", "4096", "--ops", "20", "--rounds", "2", "--csv",
                csv.toString(), "--plot", png.toString());
        assertTrue(out.contains("[0] all data checks passed"), out);
        List<String> rows = Files.readAllLines(csv);
        assertEquals(LatencyChart.HEADER, rows.get(0));
        // put, putnbi and pingpong in the three modes at 8, 64, 256, 1024, 4096 B; get on the host and ki at those;
        // one fetch-add on the host and ki.
        assertEquals(1 + 3 * 3 * 5 + 2 * 5 + 2, rows.size(), rows.toString());
        assertTrue(rows.contains("atomic,host,8," + rows.stream().filter(r -> r.startsWith("atomic,")).findFirst()
                .orElseThrow().split(",")[3]), rows.toString());
        assertTrue(rows.stream().anyMatch(r -> r.startsWith("pingpong,sa,4096,")), rows.toString());
        assertTrue(rows.stream().anyMatch(r -> r.startsWith("pingpong,ki,4096,")), rows.toString());
        assertTrue(rows.stream().anyMatch(r -> r.startsWith("atomic,ki,8,")), rows.toString());
        assertTrue(Files.size(png) > 1000);
    }
}
