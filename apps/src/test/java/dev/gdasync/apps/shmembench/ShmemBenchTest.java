package dev.gdasync.apps.shmembench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                "dev.gdasync.libmp.launch.MpRun", "--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1",
                "-np", "2", "shmembench", "--max-size", "4096", "--ops", "20", "--rounds", "2", "--csv", csv.toString(),
                "--plot", png.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().keySet().removeIf(k -> k.startsWith("GDASYNC_"));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(200, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("[0] all data checks passed"), out);
        List<String> rows = Files.readAllLines(csv);
        assertEquals(LatencyChart.HEADER, rows.get(0));
        // put and pingpong in both modes at 8, 64, 256, 1024, 4096 B; get on the host at those; one fetch-add.
        assertEquals(1 + 2 * 5 + 2 * 5 + 5 + 1, rows.size(), rows.toString());
        assertTrue(rows.contains("atomic,host,8," + rows.stream().filter(r -> r.startsWith("atomic,")).findFirst()
                .orElseThrow().split(",")[3]), rows.toString());
        assertTrue(rows.stream().anyMatch(r -> r.startsWith("pingpong,sa,4096,")), rows.toString());
        assertTrue(Files.size(png) > 1000);
    }
}
