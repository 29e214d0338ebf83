package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.JitActivity;
import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess.Finished;
import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The app end to end under the launcher ({@code dev.gdasync.libmp.launch.MpRun}, what scripts/mprun runs):
 * two rank JVMs, small iteration counts, no warm-up, payloads validated.
 */
class PingPongLaunchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    /** The launcher with the given variables, without MPJ_HOME unless given. */
    static ChildProcess.Builder launcher(Map<String, String> env, String... args) {
        return Launcher.mprun(args).removeEnvironment(k -> k.equals("MPJ_HOME")).environment(env);
    }

    /** @return the run of the launcher to its end (killed, failing the test, after 120 s) */
    static Finished mprun(Map<String, String> env, String... args) {
        return launcher(env, args).run(TIMEOUT);
    }

    private void runModes(String modes, Map<String, String> env, String... launcherArgs) throws Exception {
        Path csv = dir.resolve("pp.csv");
        Path png = dir.resolve("pp.png");
        List<String> args = new ArrayList<>(List.of(launcherArgs));
        args.addAll(List.of("-np", "2", "--jvm-opt", "-D" + MeasurementProgress.INTERVAL_PROPERTY + "=0", "pingpong", "--mode", modes, "--sizes", "8,4096,65536", "--iters", "300",
                "--reps", "2", "--warmup", "0", "--compute-us", "1", "--validate", "--csv", csv.toString(), "--plot", png.toString()));
        Finished r = mprun(env, args.toArray(String[]::new));
        assertEquals(0, r.status(), r.all());
        List<String> rows = Files.readAllLines(csv);
        assertEquals(Csv.HEADER, rows.getFirst(), r.all());
        String[] wanted = modes.split(",");
        assertEquals(1 + 3 * wanted.length, rows.size(), rows.toString());
        for (String mode : wanted) {
            for (int size : new int[]{8, 4096, 65536}) {
                String prefix = mode + "," + size + ",300,";
                assertTrue(rows.stream().anyMatch(l -> l.startsWith(prefix)), "a row " + prefix + "... in " + rows);
                assertTrue(r.out().lines().anyMatch(l -> l.matches("\\[0] " + mode + " +" + size + " +300 +[0-9.]+ +[0-9.]+ \\|.*")),
                        "a table row for " + mode + " " + size + " in\n" + r.out());
                // Every mode times each round trip (ki where its kernel runs on the host KI executor): p50 is there.
                String row = rows.stream().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow();
                if (!mode.equals("ki") || r.out().contains("host KI executor")) {
                    assertFalse(row.split(",", -1)[6].isEmpty(), "p50 in " + row);
                }
            }
        }
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "a readable PNG");
        assertEquals(LatencyPlot.WIDTH, img.getWidth());
        assertTrue(r.out().contains("8 B one-way, " + wanted[0] + ":"), r.out());
        if (!modes.startsWith("mpj")) {
            assertTrue(r.err().lines().anyMatch(l -> l.matches("\\[0] progress: " + wanted[wanted.length - 1]
                    + " 65536 B, run 2 of 2 \\(size 3 of 3\\); about .* left")), "progress lines on rank 0's stderr:\n" + r.all());
        }
    }

    @Test
    void hostSaAndKiRunValidatedUnderTheLauncher() throws Exception {
        runModes("host,sa,ki", Map.of());
    }

    @Test
    void hostSaAndKiRunValidatedOnTheMlx5ProviderBesideTheSoftwareNic() throws Exception {
        runNics("host,sa,ki", "swnic,mlx5");
    }

    @Test
    void theMlx5ProviderRunsValidatedBetweenTwoHosts() throws Exception {
        String reason = noUcx("the mlx5 run between two hosts");
        if (reason == null) {
            reason = noNetns();
        }
        Assumptions.assumeTrue(reason == null, reason);
        runNics("host,sa,ki", "mlx5", "--netns", "2");
    }

    /** Runs the modes on each NIC provider, validated, and checks a CSV row and a table row for each mode/provider. */
    private void runNics(String modes, String nics, String... launcherArgs) throws Exception {
        Path csv = dir.resolve("nics.csv");
        List<String> args = new ArrayList<>(List.of(launcherArgs));
        args.addAll(List.of("-np", "2", "--jvm-opt", "-D" + MeasurementProgress.INTERVAL_PROPERTY + "=0", "pingpong",
                "--nic", nics, "--mode", modes, "--sizes", "8,65536", "--iters", "200", "--reps", "1", "--warmup", "0",
                "--validate", "--csv", csv.toString()));
        Finished r = mprun(Map.of(), args.toArray(String[]::new));
        assertEquals(0, r.status(), r.all());
        List<String> providers = List.of(nics.split(","));
        assertTrue(r.out().contains("[0] nic: "), r.out());
        if (providers.contains("mlx5")) {
            assertTrue(r.out().contains("mlx5:swmlx5-"), "the mlx5 provider on the software mlx5 device:\n" + r.out());
        }
        List<String> rows = Files.readAllLines(csv);
        for (String mode : modes.split(",")) {
            for (String nic : providers) {
                String label = providers.size() > 1 ? mode + "/" + nic : mode;
                for (int size : new int[]{8, 65536}) {
                    String prefix = label + "," + size + ",200,";
                    assertTrue(rows.stream().anyMatch(l -> l.startsWith(prefix)), "a row " + prefix + "... in " + rows);
                }
            }
        }
    }

    @Test
    void aCorruptedMessageFailsTheRunNamingIterationAndByte() throws Exception {
        for (String mode : new String[]{"host", "sa", "ki"}) {
            // Rank 1 flips the first byte of its reply of iteration 5 (a test-only fault hook).
            Finished r = mprun(Map.of(), "-np", "2", "--grace", "1", "--jvm-opt", "-Dgdasync.pingpong.corruptAt=5",
                    "pingpong",
                    "--mode", mode, "--sizes", "8", "--iters", "50", "--reps", "1", "--warmup", "0", "--validate");
            assertEquals(1, r.status(), r.all());
            assertTrue(r.err().contains("[0] pingpong: " + mode + " mode, rank 0: validation failed at iteration 5, byte 0 of 8: expected 0x"),
                    r.all());
        }
    }

    /** @return why UCX cannot be used here, printed as the reason for skipping, or null when it can */
    static String noUcx(String what) {
        java.util.Optional<String> reason = dev.gdasync.gdsync.ucx.UcxLibrary.unavailableReason();
        reason.ifPresent(r -> System.out.println("PingPongLaunchTest: skipping " + what + ": " + r));
        return reason.orElse(null);
    }

    @Test
    void jucxRunsValidatedBesideHostUnderTheLauncher() throws Exception {
        String reason = noUcx("the jucx run");
        Assumptions.assumeTrue(reason == null, reason);
        runModes("host,jucx", Map.of());
    }

    @Test
    void hostAndSaRunValidatedOverTheUcxTransportOnOneHost() throws Exception {
        String reason = noUcx("the ucx transport run");
        Assumptions.assumeTrue(reason == null, reason);
        runModes("host,sa", Map.of("GDASYNC_TRANSPORT", "ucx"));
    }

    @Test
    void hostSaAndJucxRunValidatedBetweenTwoHosts() throws Exception {
        String reason = noUcx("the run between two hosts");
        if (reason == null) {
            reason = noNetns();
        }
        Assumptions.assumeTrue(reason == null, reason);
        runModes("host,sa,jucx", Map.of(), "--netns", "2");
    }

    /** @return why ranks cannot run in network namespaces here, printed as the reason for skipping, or null */
    private static String noNetns() throws Exception {
        Process id = new ProcessBuilder("id", "-u").start();
        String uid = new String(id.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        id.waitFor();
        String reason = !uid.equals("0") ? "not root (uid " + uid + ")"
                : Files.isExecutable(Path.of("/usr/sbin/ip")) || Files.isExecutable(Path.of("/sbin/ip")) ? null : "no ip command";
        if (reason != null) {
            System.out.println("PingPongLaunchTest: skipping the run between two hosts (network namespaces): " + reason);
        }
        return reason;
    }

    @Test
    void jucxOverTcpRunsWhenUcxTlsSaysSo() throws Exception {
        String reason = noUcx("the jucx run over tcp");
        Assumptions.assumeTrue(reason == null, reason);
        Finished r = mprun(Map.of("UCX_TLS", "tcp"), "-np", "2", "pingpong", "--mode", "jucx", "--sizes", "8,65536",
                "--iters", "100", "--reps", "1", "--warmup", "0", "--validate");
        assertEquals(0, r.status(), r.all());
        assertTrue(r.out().contains("[0] jucx: UCX "), r.all());
        assertTrue(r.out().contains("UCX_TLS=tcp"), r.all());
        assertTrue(r.out().contains("8 B one-way, jucx:"), r.all());
    }

    @Test
    void aCorruptedJucxMessageFailsTheRunNamingIterationAndByte() throws Exception {
        String reason = noUcx("the corrupted jucx message");
        Assumptions.assumeTrue(reason == null, reason);
        Finished r = mprun(Map.of(), "-np", "2", "--grace", "1", "--jvm-opt", "-Dgdasync.pingpong.corruptAt=5", "pingpong",
                "--mode", "jucx", "--sizes", "8", "--iters", "50", "--reps", "1", "--warmup", "0", "--validate");
        assertEquals(1, r.status(), r.all());
        assertTrue(r.err().contains("[0] pingpong: jucx mode, rank 0: validation failed at iteration 5, byte 0 of 8: expected 0x"),
                r.all());
    }

    @Test
    void mpjRunsUnderTheLauncherWhenMpjExpressIsThere() throws Exception {
        String home = Launcher.mpjHome();
        if (home == null) {
            System.out.println("PingPongLaunchTest: skipping the mpj run: MPJ Express is not set up (no MPJ_HOME, and no "
                    + System.getProperty("gdasync.mpj.home") + "/lib/starter.jar; scripts/test and scripts/mprun set it up)");
        }
        Assumptions.assumeTrue(home != null, "MPJ Express is not set up (MPJ_HOME)");
        runModes("mpj", Map.of("MPJ_HOME", home));
    }

    @Test
    void mpjNiodevRunsUnderTheLauncherWhenMpjExpressIsThere() throws Exception {
        String home = Launcher.mpjHome();
        if (home == null) {
            System.out.println("PingPongLaunchTest: skipping the mpj-niodev run: MPJ Express is not set up (no MPJ_HOME,"
                    + " and no " + System.getProperty("gdasync.mpj.home") + "/lib/starter.jar)");
        }
        Assumptions.assumeTrue(home != null, "MPJ Express is not set up (MPJ_HOME)");
        runModes("mpj-niodev", Map.of("MPJ_HOME", home));
    }

    @Test
    void kiOnAGpuThatIsNotThereSaysWhy() throws Exception {
        java.util.Optional<String> noGpu = dev.gdasync.gdsync.cuda.CudaDriver.unavailableReason();
        if (noGpu.isEmpty()) {
            System.out.println("PingPongLaunchTest: skipping the no-GPU message check: this machine has a usable GPU");
        }
        Assumptions.assumeTrue(noGpu.isPresent(), "this machine has a usable GPU");
        Finished r = mprun(Map.of(), "-np", "2", "pingpong", "--mode", "ki", "--iters", "10", "--ki-executor", "gpu");
        assertEquals(1, r.status(), r.all());
        assertTrue(r.err().contains("[0] pingpong: --ki-executor gpu: " + noGpu.get()), r.all());
        assertTrue(r.err().lines().noneMatch(l -> l.contains("\tat ")), "no stack trace:\n" + r.all());
    }

    @Test
    void gpuBuffersWithoutAGpuSayWhy() throws Exception {
        java.util.Optional<String> noGpu = KiExecutors.gpuUnavailable();
        if (noGpu.isEmpty()) {
            System.out.println("PingPongLaunchTest: skipping the no-GPU message check: this machine has a usable GPU");
        }
        Assumptions.assumeTrue(noGpu.isPresent(), "this machine has a usable GPU");
        Finished r = mprun(Map.of(), "-np", "2", "pingpong", "--buffers", "gpu", "--iters", "10");
        assertEquals(1, r.status(), r.all());
        assertTrue(r.err().contains("[0] pingpong: --buffers gpu: " + noGpu.get()), r.all());
        assertTrue(r.err().lines().noneMatch(l -> l.contains("\tat ")), "no stack trace:\n" + r.all());
    }

    /**
     * The environment that puts the stand-in libcuda (built by gcc from gdsync's test resources) in front of the
     * ranks, or null, printing why, when it cannot be built or the kernels were not built.
     */
    private Map<String, String> standInDriver() throws IOException {
        java.util.Optional<String> reason = dev.gdasync.gdsync.cuda.FakeCuda.unavailableReason();
        if (reason.isEmpty() && !dev.gdasync.ki.kernels.KiKernels.available()) {
            reason = java.util.Optional.of("ki-kernels was built without nvcc, so there is no compute kernel to launch");
        }
        if (reason.isPresent()) {
            System.out.println("SKIPPED (stand-in libcuda): " + reason.get());
            return null;
        }
        Path lib = dev.gdasync.gdsync.cuda.FakeCuda.build(Files.createDirectory(dir.resolve("fake-cuda")));
        Path devmem = Files.createDirectory(dir.resolve("fake-devmem"));
        return Map.of("LD_LIBRARY_PATH", lib.toString(), "FAKE_CUDA_SHM_DIR", devmem.toString());
    }

    @Test
    void gpuBuffersRunValidatedOnCudaStreamsOfTheStandInDriver() throws Exception {
        Map<String, String> env = standInDriver();
        Assumptions.assumeTrue(env != null, "no stand-in libcuda");
        Path csv = dir.resolve("gpu.csv");
        Finished r = mprun(env, "-np", "2", "pingpong", "--buffers", "gpu", "--mode", "host,sa", "--sizes", "8,4096,65536",
                "--iters", "100", "--reps", "1", "--warmup", "0", "--compute-us", "2", "--validate", "--csv", csv.toString());
        assertEquals(0, r.status(), r.all());
        List<String> rows = Files.readAllLines(csv);
        assertEquals(1 + 6, rows.size(), rows.toString());
        for (String mode : new String[]{"host", "sa"}) {
            for (int size : new int[]{8, 4096, 65536}) {
                String prefix = mode + "," + size + ",100,";
                assertTrue(rows.stream().anyMatch(l -> l.startsWith(prefix)), "a row " + prefix + "... in " + rows);
            }
            assertTrue(r.out().contains("[0] " + mode + ": gpu buffers on Fake GPU (device 0"), r.all());
        }
        assertTrue(r.out().contains("[0] sa: a CUDA stream rings the sends and waits for the receives"), r.all());
        assertTrue(r.out().contains("not applicable with --compute-us"), r.all());
    }

    @Test
    void aCorruptedGpuMessageFailsTheRunNamingIterationAndByte() throws Exception {
        Map<String, String> env = standInDriver();
        Assumptions.assumeTrue(env != null, "no stand-in libcuda");
        for (String mode : new String[]{"host", "sa"}) {
            Finished r = mprun(env, "-np", "2", "--grace", "1", "--jvm-opt", "-Dgdasync.pingpong.corruptAt=5", "pingpong",
                    "--buffers", "gpu", "--mode", mode, "--sizes", "8", "--iters", "50", "--reps", "1", "--warmup", "0",
                    "--validate");
            assertEquals(1, r.status(), r.all());
            assertTrue(r.err().contains("[0] pingpong: " + mode + " mode (gpu buffers), rank 0: validation failed at iteration 5,"
                    + " byte 0 of 8: expected 0x"), r.all());
        }
    }

    @Test
    void mpjWithoutMpjHomeSaysWhatToDo() throws Exception {
        Finished r = mprun(Map.of(), "-np", "2", "pingpong", "--mode", "host,mpj", "--iters", "10");
        assertEquals(1, r.status(), r.all());
        assertTrue(r.err().contains("[0] pingpong: --mode mpj needs MPJ Express: MPJ_HOME is not set. Run the ping-pong with scripts/mprun"),
                r.all());
    }

    @Test
    void aWrongCommandLineExitsWithTwoAndOneMessageAndAHint() throws Exception {
        Finished r = mprun(Map.of(), "-np", "2", "pingpong", "--sizes", "8,zero");
        assertEquals(2, r.status(), r.all());
        assertEquals(List.of("[0] pingpong: invalid value for option '--sizes': 'zero' is not a byte count (a positive integer,"
                        + " optionally with K or M)", "[0] Run 'scripts/mprun -np 2 pingpong --help' for the options.",
                "mprun: ranks 0 and 1 exited with status 2"), r.err().lines().toList(),
                "rank 0 explains, rank 1 stays quiet, the launcher speaks last:\n" + r.all());
    }

    /**
     * Two 2-rank jobs at once on a machine of fewer than 4 CPUs: the second job sees the first's ranks in the CPU share
     * registry, says both are oversubscribed and that its waits yield, and both jobs finish with every payload checked.
     */
    @Test
    void twoJobsAtOnceBothFinishValidatedAndTheSecondYields() throws Exception {
        int cpus = Runtime.getRuntime().availableProcessors();
        if (cpus >= 4) {
            System.out.println("PingPongLaunchTest: skipping the two-jobs check: " + cpus + " CPUs are enough for both jobs");
        }
        Assumptions.assumeTrue(cpus < 4, cpus + " CPUs");
        // The first job warms up long enough for the second to start and register beside it (and not longer: its
        // warm-up does not wait for a quiet JIT as well, which the second job's start keeps busy).
        try (ChildProcess first = launcher(Map.of(), "-np", "2", "--jvm-opt", "-D" + JitActivity.MAX_SETTLE_PROPERTY + "=0",
                "pingpong", "--mode", "host,sa", "--sizes", "8",
                "--iters", "2000", "--reps", "2", "--warmup", "12", "--validate").start()) {
            first.awaitLine(line -> line.startsWith("[0] cpu share: "), TIMEOUT);
            Finished second = mprun(Map.of(), "-np", "2", "pingpong", "--mode", "host,sa", "--sizes", "8",
                    "--iters", "2000", "--reps", "2", "--warmup", "0", "--validate");
            int firstStatus = first.awaitExit(TIMEOUT);
            assertEquals(0, second.status(), second.all());
            assertEquals(0, firstStatus, first.describe());
            String share = second.out().lines().filter(l -> l.startsWith("[0] cpu share: ")).findFirst().orElse("");
            assertTrue(share.contains("of 2 gdasync jobs") || share.matches(".* of [3-9] gdasync jobs.*"),
                    "the second job counts the first's ranks: " + share + "\n" + second.all());
            assertTrue(share.contains(": oversubscribed, waits yield and no thread is pinned") && share.endsWith("; waits yield"),
                    "the second job yields and pins nothing: " + share);
            assertTrue(second.out().contains("[0] sa: stream threads not pinned"), second.all());
            assertTrue(second.out().contains("8 B one-way, host:"), second.all());
            assertTrue(first.stdoutText().contains("8 B one-way, host:"), first.describe());
        }
    }

    @Test
    void oneRankIsRefused() throws Exception {
        Finished r = mprun(Map.of(), "-np", "1", "pingpong", "--iters", "10");
        assertEquals(2, r.status(), r.all());
        assertTrue(r.err().contains("pingpong: runs with exactly 2 ranks (scripts/mprun -np 2 pingpong ...), not 1"), r.all());
    }
}
