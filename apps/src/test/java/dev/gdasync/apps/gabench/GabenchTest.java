package dev.gdasync.apps.gabench;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The geometry and plan, the report, and the app end to end under the launcher on 2 rank processes. */
@Timeout(400)
class GabenchTest {
    @TempDir
    Path dir;

    @Test
    void stridedPatchesCutIntoRunsOfTheirRows() {
        Geometry g = Geometry.of(List.of(8, 256, 4096), 256);
        assertEquals(512, g.rowBytes());
        assertEquals(16, g.blockRows());
        assertEquals(1, g.runs(8));
        assertEquals(8, g.run(8));
        assertEquals(16, g.runs(4096));
        assertEquals(128 + 3 * 512, g.runOffset(3));
        assertEquals(8192, g.windowBytes());
        assertThrows(IllegalArgumentException.class, () -> Geometry.of(List.of(12), 256));
        assertThrows(IllegalArgumentException.class, () -> Geometry.of(List.of(8, 768), 512));
    }

    @Test
    void largePatchesGetFewerOperationsAndThePlanRoundTrips() {
        Plan p = new Plan(List.of(8, 1 << 20), 512, 100, 4 << 20, 3, 0);
        assertEquals(100, p.iters(8));
        assertEquals(4, p.iters(1 << 20));
        assertEquals(2, new Plan(List.of(8 << 20), 512, 100, 4 << 20, 3, 0).iters(8 << 20));
        assertEquals(p, Plan.parse(p.args().toArray(String[]::new)));
    }

    @Test
    void tableCsvAndPlotShowEveryMethod() {
        List<Row> rows = List.of(new Row("ga", "contig", "put", 64, 1, 10, new double[] {2, 4, 3}),
                new Row("raw", "contig", "put", 64, 1, 10, new double[] {1, 1, 1}),
                new Row("mpj", "contig", "put", 64, 1, 10, new double[] {8, 8}));
        assertEquals(3.0, rows.getFirst().medianMicros());
        assertEquals(6.0, rows.get(2).megabytesPerSecond() * 0.75);
        String csv = Report.csv(rows);
        assertTrue(csv.startsWith(Report.CSV_HEADER + "\n"));
        assertTrue(csv.contains("ga,contig,put,64,1,10,3,3.0000,2.0000,4.0000,21.33\n"), csv);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        Report.table(rows, new java.io.PrintStream(out, true, StandardCharsets.UTF_8));
        String table = out.toString(StandardCharsets.UTF_8);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("put contig") && l.contains("3.00") && l.contains("8.00")), table);
        BufferedImage img = BenchPlot.render(rows);
        assertEquals(4 * BenchPlot.PANEL_W, img.getWidth());
    }

    @Test
    void twoRanksMeasureEveryMethodAndCheckTheBytes() throws Exception {
        Path csv = dir.resolve("ga.csv");
        Path png = dir.resolve("ga.png");
        String home = Launcher.mpjHome();
        String out = mprun(home == null ? Map.of() : Map.of("MPJ_HOME", home), "-np", "2", "gabench", "--sizes", "8,256,2048",
                "--run-bytes", "256", "--iters", "20", "--reps", "2", "--warmup-ms", "100", "--csv", csv.toString(), "--plot", png.toString());
        assertTrue(out.contains("[0] gabench: all data checks passed"), out);
        List<String> lines = Files.readAllLines(csv);
        assertEquals(Report.CSV_HEADER, lines.getFirst());
        List<String> methods = new ArrayList<>(List.of("ga", "ga-reg", "raw"));
        if (home != null) {
            methods.add("mpj");
        } else {
            assertTrue(out.contains("the MPJ Express baseline is left out"), out);
        }
        assertEquals(1 + methods.size() * 2 * 2 * 3, lines.size(), String.join("\n", lines));
        for (String m : methods) {
            for (String layoutOp : new String[] {"contig,put", "contig,get", "strided,put", "strided,get"}) {
                for (String size : new String[] {"8", "256", "2048"}) {
                    String runs = layoutOp.startsWith("strided") && size.equals("2048") ? "8" : "1";
                    String start = m + "," + layoutOp + "," + size + "," + runs + ",20,2,";
                    assertTrue(lines.stream().anyMatch(l -> l.startsWith(start)), start + " in\n" + String.join("\n", lines));
                }
            }
        }
        assertTrue(out.lines().anyMatch(l -> l.contains("get strided") && l.contains("2048")), out);
        assertTrue(Files.size(png) > 0);
    }

    @Test
    void badSizesAreRejectedWithAMessage() {
        ChildProcess.Finished run = launcher(Map.of(), "-np", "2", "gabench", "--sizes", "12").run(Duration.ofSeconds(200));
        assertTrue(run.status() != 0, run.out());
        assertTrue(run.out().contains("gabench: sizes must be positive multiples of 8 bytes, got 12"), run.out());
    }

    /** The launcher with light rank JVMs, its stderr merged into its stdout, without MPJ_HOME unless given. */
    private static ChildProcess.Builder launcher(Map<String, String> env, String... args) {
        List<String> a = new ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1"));
        a.addAll(List.of(args));
        return Launcher.mprun(a).removeEnvironment(k -> k.equals("MPJ_HOME")).environment(env).mergeStderr();
    }

    /** @return the output of a run that must exit 0 within 300 s */
    private static String mprun(Map<String, String> env, String... args) {
        ChildProcess.Finished run = launcher(env, args).run(Duration.ofSeconds(300));
        assertEquals(0, run.status(), run.out());
        return run.out();
    }
}
