package dev.gdasync.apps.comd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
    private static final long TIMEOUT_SECONDS = 240;
    private static final Pattern ENERGY = Pattern.compile("^\\[0] +(\\d+) +[0-9.]+ +(-?[0-9.]+) +(-?[0-9.]+) +(-?[0-9.]+) +[0-9.]+ +[0-9.]+ +(\\d+)$");

    @TempDir
    Path dir;

    private record Run(int status, String out, String err) {
        String all() {
            return "exit status " + status + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    private static List<String> command(String... args) {
        List<String> cmd = new ArrayList<>(List.of(javaBinary(), "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "dev.gdasync.libmp.launch.MpRun"));
        cmd.addAll(List.of(args));
        return cmd;
    }

    private static ProcessBuilder builder(String... args) {
        ProcessBuilder pb = new ProcessBuilder(command(args));
        pb.environment().keySet().removeIf(k -> k.startsWith("GDASYNC_") || k.equals("MPJ_HOME"));
        String mpj = mpjHome();
        if (mpj != null) {
            pb.environment().put("MPJ_HOME", mpj);
        }
        return pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    }

    private static Run mprun(String... args) throws Exception {
        Process p = builder(args).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread a = Thread.ofPlatform().daemon().start(() -> copy(p.getInputStream(), out));
        Thread b = Thread.ofPlatform().daemon().start(() -> copy(p.getErrorStream(), err));
        try {
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                fail("mprun " + String.join(" ", args) + " did not end within " + TIMEOUT_SECONDS + " s; output so far:\n"
                        + out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8));
            }
            a.join(5000);
            b.join(5000);
            return new Run(p.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream to) {
        try (in) {
            in.transferTo(to);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** @return MPJ_HOME from the environment or the build (scripts/ set it up under .tools/mpj-home), or null */
    static String mpjHome() {
        for (String home : new String[]{System.getenv("MPJ_HOME"), System.getProperty("gdasync.mpj.home")}) {
            if (home != null && Files.isRegularFile(Path.of(home, "lib", "starter.jar"))) {
                return home;
            }
        }
        return null;
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
        String modes = mpjHome() != null ? "mpj,host,sa,ki" : "host,sa,ki";
        Path csv = dir.resolve("comd.csv");
        Path png = dir.resolve("comd.png");
        List<String> args = new ArrayList<>(List.of("-np", ranks, "comd", "-x", "8", "-y", "8", "-z", "8", "-N", "40", "-n", "10"));
        args.addAll(List.of(decomposition.split(" ")));
        args.addAll(List.of("--mode", modes, "--csv", csv.toString(), "--plot", png.toString()));
        Run r = mprun(args.toArray(String[]::new));
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
        Run r = mprun("-np", "2", "comd", "-x", "8", "-y", "8", "-z", "8", "-N", "10");
        assertTrue(r.status() != 0, r.all());
        assertTrue(r.err().contains("[0] comd: -i x -j x -k = 1 x 1 x 1 = 1 ranks, but the job has 2 (scripts/mprun -np 1 comd ...)"),
                r.all());
    }

    @Test
    void aKilledRankEndsTheJobWithAnError() throws Exception {
        for (String mode : new String[]{"host", "sa", "ki"}) {
            Process p = builder("-np", "2", "comd", "-x", "8", "-y", "8", "-z", "8", "-N", "1000000", "-n", "10", "-i", "2",
                    "--mode", mode).start();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread b = Thread.ofPlatform().daemon().start(() -> copy(p.getErrorStream(), err));
            CountDownLatch running = new CountDownLatch(1);
            StringBuilder out = new StringBuilder();
            Thread a = Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        out.append(line).append('\n');
                        if (line.matches("^\\[0] +20 .*")) {
                            running.countDown();
                        }
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            try {
                assertTrue(running.await(120, TimeUnit.SECONDS), mode + ": no step 20 line:\n" + out + err);
                List<ProcessHandle> ranks = p.children().toList();
                assertEquals(2, ranks.size(), "two rank JVMs under the launcher");
                long t0 = System.nanoTime();
                assertTrue(ranks.get(1).destroyForcibly());
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), mode + ": the job did not end within 60 s of a rank's death:\n" + out + err);
                long seconds = (System.nanoTime() - t0) / 1_000_000_000L;
                a.join(5000);
                b.join(5000);
                assertTrue(p.exitValue() != 0, mode + ": the launcher must fail:\n" + out + err);
                assertTrue(seconds < 30, mode + ": ended " + seconds + " s after the kill");
            } finally {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }
}
