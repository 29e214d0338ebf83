package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess.Finished;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.gdasync.apps.pingpong.PingPongLaunchTest.mprun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code msgrate} end to end under the launcher, as {@code scripts/mprun -np 2 msgrate} runs it: small counts. */
class MessageRateLaunchTest {
    @TempDir
    Path dir;

    private void runModes(String modes, Map<String, String> env) throws Exception {
        Path csv = dir.resolve("rate.csv");
        Path png = dir.resolve("rate.png");
        Finished r = mprun(env, "-np", "2", "--jvm-opt", "-D" + MeasurementProgress.INTERVAL_PROPERTY + "=0",
                "msgrate", "--mode", modes, "--sizes", "8,65536", "--window", "16", "--iters", "50", "--reps", "2",
                "--warmup", "0", "--csv", csv.toString(), "--plot", png.toString());
        assertEquals(0, r.status(), r.all());
        List<String> rows = Files.readAllLines(csv);
        assertEquals(RateCsv.HEADER, rows.getFirst(), r.all());
        String[] wanted = modes.split(",");
        assertEquals(1 + 2 * wanted.length, rows.size(), rows.toString());
        for (String mode : wanted) {
            for (int size : new int[]{8, 65536}) {
                String prefix = mode + "," + size + ",16,50,";
                String row = rows.stream().filter(l -> l.startsWith(prefix)).findFirst()
                        .orElseThrow(() -> new AssertionError("a row " + prefix + "... in " + rows));
                String[] cells = row.split(",", -1);
                double rate = Double.parseDouble(cells[4]);
                assertTrue(rate > 0, "a positive rate in " + row);
                assertEquals(rate * size / 1e6, Double.parseDouble(cells[5]), rate * size / 1e6 * 1e-3 + 0.01,
                        "MB/s = msgs/s x bytes in " + row);
                assertTrue(r.out().lines().anyMatch(l -> l.matches("\\[0] " + mode + " +" + size + " +16 +[0-9]+ +[0-9.]+ \\|.*")),
                        "a table row for " + mode + " " + size + " in\n" + r.out());
            }
        }
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "a readable PNG");
        assertEquals(LatencyPlot.WIDTH, img.getWidth());
    }

    @Test
    void hostAndSaRunUnderTheLauncher() throws Exception {
        runModes("host,sa", Map.of());
    }

    @Test
    void jucxAndMpjRunBesideHostWhenTheyAreThere() throws Exception {
        List<String> modes = new ArrayList<>(List.of("host"));
        String noUcx = PingPongLaunchTest.noUcx("msgrate's jucx mode");
        if (noUcx == null) {
            modes.add("jucx");
        }
        String home = Launcher.mpjHome();
        if (home == null) {
            System.out.println("MessageRateLaunchTest: skipping msgrate's mpj mode: MPJ Express is not set up (MPJ_HOME)");
        } else {
            modes.add("mpj");
        }
        Assumptions.assumeTrue(modes.size() > 1, "neither UCX nor MPJ Express is here");
        runModes(String.join(",", modes), home == null ? Map.of() : Map.of("MPJ_HOME", home));
    }

    @Test
    void ucxPerftestsTagBwRunsBesideHostWithItsTargetLine() throws Exception {
        if (Executables.onPath("ucx_perftest").isEmpty()) {
            String why = "ucx_perftest is not on PATH (" + CPeers.INSTALL_HINT + ")";
            System.out.println("MessageRateLaunchTest: skipping msgrate's ucx mode: " + why);
            Assumptions.abort(why);
        }
        runModes("host,ucx", Map.of());
        List<String> rows = Files.readAllLines(dir.resolve("rate.csv"));
        String ucx = rows.stream().filter(l -> l.startsWith("ucx,8,")).findFirst().orElseThrow();
        assertTrue(ucx.endsWith(",,"), "ucx_perftest reports no window percentiles: " + ucx);
    }

    @Test
    void ucxIsSkippedWithItsReasonWhenUcxPerftestIsMissing() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("empty-path"));
        Finished r = mprun(Map.of("PATH", empty.toString()), "-np", "2", "msgrate", "--mode", "host,ucx",
                "--sizes", "8", "--window", "8", "--iters", "20", "--reps", "1", "--warmup", "0");
        assertEquals(0, r.status(), r.all());
        assertTrue(r.out().contains("ucx: skipped: UCX's ucx_perftest is not on PATH"), r.all());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\[0] host +8 +8 .*")), r.all());
    }

    @Test
    void theTargetLineComparesWithJucxOnlyWhenJucxRan() throws Exception {
        Finished r = mprun(Map.of(), "-np", "2", "msgrate", "--mode", "host", "--sizes", "8", "--window", "8",
                "--iters", "20", "--reps", "1", "--warmup", "0");
        assertEquals(0, r.status(), r.all());
        assertTrue(r.out().contains("8 B message rate, host: "), r.all());
        assertTrue(r.out().contains("add --mode jucx to judge it"), r.all());
    }

    @Test
    void aTimedWarmUpGoesOnUntilTheJitIsQuietAndSaysSo() throws Exception {
        Finished r = mprun(Map.of(), "-np", "2", "msgrate", "--mode", "host", "--sizes", "8", "--window", "8",
                "--iters", "20", "--reps", "1", "--warmup", "0.3");
        assertEquals(0, r.status(), r.all());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\[0] warm-up: [0-9.]+ s more after the timed warm-up until the"
                + " JIT was quiet \\(every rank's compilers under 2 % of a CPU for 500 ms or more\\)")
                || l.matches("\\[0] warm-up: the JIT was still compiling [0-9.]+ s after the timed warm-up .*")), r.all());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\[0] host +8 +8 .*")), r.all());
    }

    @Test
    void kiAndAWrongWindowAreRefusedWithOneMessage() throws Exception {
        Finished ki = mprun(Map.of(), "-np", "2", "msgrate", "--mode", "host,ki");
        assertEquals(2, ki.status(), ki.all());
        assertTrue(ki.err().contains("[0] msgrate: --mode: msgrate measures host, sa, jucx, ucx and mpj, not ki"), ki.all());
        Finished w = mprun(Map.of(), "-np", "2", "msgrate", "--window", "0");
        assertEquals(2, w.status(), w.all());
        assertTrue(w.err().contains("0 is not from 1 to " + RateOptions.MAX_WINDOW), w.all());
    }

    @Test
    void oneRankIsRefused() throws Exception {
        Finished r = mprun(Map.of(), "-np", "1", "msgrate", "--mode", "host", "--iters", "10");
        assertEquals(2, r.status(), r.all());
        assertTrue(r.err().contains("msgrate: runs with exactly 2 ranks (scripts/mprun -np 2 msgrate ...), not 1"), r.all());
    }
}
