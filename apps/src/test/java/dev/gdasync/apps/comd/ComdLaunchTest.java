package dev.gdasync.apps.comd;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess.Finished;
import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The app end to end under the launcher ({@code dev.gdasync.libmp.launch.MpRun}, what scripts/mprun runs): rank JVMs,
 * every mode side by side (mpj where MPJ Express is installed, as scripts/ install it), CoMD's output, the CSV and
 * the plot; a wrong rank count; a rank killed mid-run.
 */
class ComdLaunchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(240);
    private static final Pattern ENERGY = Pattern.compile("^\\[0] +(\\d+) +[0-9.]+ +(-?[0-9.]+) +(-?[0-9.]+) +(-?[0-9.]+) +[0-9.]+ +[0-9.]+ +(\\d+)$");

    @TempDir
    Path dir;

    /** The launcher, with MPJ_HOME only when MPJ Express is set up. */
    private static ChildProcess.Builder launcher(String... args) {
        String mpj = Launcher.mpjHome();
        ChildProcess.Builder b = Launcher.mprun(args).removeEnvironment(k -> k.equals("MPJ_HOME"));
        return mpj == null ? b : b.environment(Map.of("MPJ_HOME", mpj));
    }

    /** @return the launcher's run to its end (killed, failing the test, after 240 s) */
    private static Finished mprun(String... args) {
        return launcher(args).run(TIMEOUT);
    }

    /** @return per mode, the energy lines rank 0 printed ("step total potential kinetic atoms") */
    private static Map<String, List<String>> tables(String out) {
        Map<String, List<String>> t = new java.util.LinkedHashMap<>();
        String mode = null;
        for (String line : out.lines().toList()) {
            if (line.startsWith("[0] ==== comd --mode ")) {
                mode = line.substring("[0] ==== comd --mode ".length(), line.indexOf(" ====", 10));
                t.put(mode, new ArrayList<>());
            }
            Matcher m = ENERGY.matcher(line);
            if (mode != null && m.matches()) {
                t.get(mode).add(m.group(1) + " " + m.group(2) + " " + m.group(3) + " " + m.group(4) + " " + m.group(5));
            }
        }
        return t;
    }

    private void runsEveryModeAndAgrees(String ranks, String decomposition) throws Exception {
        String modes = Launcher.mpjHome() != null ? "mpj,host,sa,ki" : "host,sa,ki";
        Path csv = dir.resolve("comd.csv");
        Path png = dir.resolve("comd.png");
        List<String> args = new ArrayList<>(List.of("-np", ranks, "comd", "-x", "8", "-y", "8", "-z", "8", "-N", "40", "-n", "10"));
        args.addAll(List.of(decomposition.split(" ")));
        args.addAll(List.of("--mode", modes, "--csv", csv.toString(), "--plot", png.toString()));
        Finished r = mprun(args.toArray(String[]::new));
        assertEquals(0, r.status(), r.all());
        Map<String, List<String>> t = tables(r.out());
        assertEquals(List.of(modes.split(",")), List.copyOf(t.keySet()), r.all());
        List<double[]> ref = ComdReferenceTest.reference("reference-energies.csv").get("-x 8 -y 8 -z 8 -N 40 -n 10");
        for (Map.Entry<String, List<String>> e : t.entrySet()) {
            assertEquals(t.get(modes.split(",")[0]), e.getValue(), e.getKey() + " prints the same energies as the first mode");
            assertEquals(5, e.getValue().size(), e.getKey() + ": steps 0..40 every 10");
            for (int i = 0; i < ref.size(); i++) {
                String[] f = e.getValue().get(i).split(" ");
                assertEquals(ref.get(i)[1], Double.parseDouble(f[1]), 1.5e-12, e.getKey() + " total energy at step " + f[0]);
                assertEquals(ref.get(i)[2], Double.parseDouble(f[2]), 1.5e-12, e.getKey() + " potential energy at step " + f[0]);
            }
        }
        assertEquals(t.size(), r.out().lines().filter(l -> l.equals("[0]   Final atom count : 2048, no atoms lost")).count(), r.all());
        assertTrue(r.out().contains("[0] energies: the same bits at every printed step in every mode and run; every atom kept"), r.all());
        List<String> rows = Files.readAllLines(csv);
        assertEquals(ComdCsv.HEADER, rows.getFirst());
        assertEquals(1 + t.size(), rows.size(), rows.toString());
        for (String mode : t.keySet()) {
            assertTrue(rows.stream().anyMatch(l -> l.startsWith("lj," + ranks + "," + decomposition.replaceAll("-[ijk] ", "")
                    .replace(" ", "x") + ",8x8x8,2048," + mode + ",")) || rows.stream().anyMatch(l -> l.contains(",8x8x8,2048," + mode + ",")),
                    mode + " row in " + rows);
        }
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "a readable PNG");
        assertEquals(StepPlot.WIDTH, img.getWidth());
    }

    @Test
    void twoRanksRunEveryModeSideBySideWithTheReferenceEnergies() throws Exception {
        runsEveryModeAndAgrees("2", "-i 2");
    }

    @Test
    void fourRanksRunEveryModeSideBySideWithTheReferenceEnergies() throws Exception {
        runsEveryModeAndAgrees("4", "-i 2 -j 2");
    }

    @Test
    void aRankCountThatDoesNotMatchTheDecompositionIsOneLine() throws Exception {
        Finished r = mprun("-np", "2", "comd", "-x", "8", "-y", "8", "-z", "8", "-N", "10");
        assertTrue(r.status() != 0, r.all());
        assertTrue(r.err().contains("[0] comd: -i x -j x -k = 1 x 1 x 1 = 1 ranks, but the job has 2 (scripts/mprun -np 1 comd ...)"),
                r.all());
    }

    @Test
    void aKilledRankEndsTheJobWithAnError() throws Exception {
        for (String mode : new String[]{"host", "sa", "ki"}) {
            try (ChildProcess job = launcher("-np", "2", "comd", "-x", "8", "-y", "8", "-z", "8", "-N", "1000000", "-n",
                    "10", "-i", "2", "--mode", mode).start()) {
                job.awaitLine(line -> line.matches("^\\[0] +20 .*"), Duration.ofSeconds(120));
                List<ProcessHandle> ranks = job.process().children().toList();
                assertEquals(2, ranks.size(), "two rank JVMs under the launcher");
                long t0 = System.nanoTime();
                assertTrue(ranks.get(1).destroyForcibly());
                int status = job.awaitExit(Duration.ofSeconds(60));
                long seconds = (System.nanoTime() - t0) / 1_000_000_000L;
                assertTrue(status != 0, mode + ": the launcher must fail: " + job.describe());
                assertTrue(seconds < 30, mode + ": ended " + seconds + " s after the kill");
            }
        }
    }
}
