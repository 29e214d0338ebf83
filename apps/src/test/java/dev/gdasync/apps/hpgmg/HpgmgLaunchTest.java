package dev.gdasync.apps.hpgmg;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The app end to end under the launcher ({@code dev.gdasync.libmp.launch.MpRun}, what scripts/mprun runs):
 * rank JVMs, one timed solve per mode. The 32^3 norm in every mode on 1 and 2 ranks (mpj too where MPJ
 * Express is set up), 48^3 on 4 ranks against upstream's C, bad arguments, and a rank killed mid-solve.
 */
class HpgmgLaunchTest {
    private static final long TIMEOUT_SECONDS = 240;
    /** Upstream's C, {@code hpgmg-fv 4 27}: the 48^3 grid that 4 ranks with 7 boxes each make. */
    private static final double UPSTREAM_48 = 1.981469376954870e-04;
    private static final Pattern SUMMARY = Pattern.compile(
            "\\[0]   \\[(\\w+)] h=\\S+  DOF=\\S+  time=\\S+  DOF/s=\\S+  MPI=(\\d+)  OMP=1  norm=(\\S+)");

    @TempDir
    Path dir;

    /** A running launcher: its output lines as they come, its exit. */
    private static final class Job implements AutoCloseable {
        final Process process;
        final List<String> out = Collections.synchronizedList(new ArrayList<>());
        final List<String> err = Collections.synchronizedList(new ArrayList<>());
        private final Thread[] readers;

        Job(String... args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(javaBinary(), "--enable-native-access=ALL-UNNAMED",
                    "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), "dev.gdasync.libmp.launch.MpRun",
                    "--jvm-opt", "-XX:+UseSerialGC"));
            cmd.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().keySet().removeIf(k -> k.startsWith("GDASYNC_") || k.equals("MPJ_HOME") || k.equals("CLASSPATH"));
            mpjHome().ifPresent(h -> pb.environment().put("MPJ_HOME", h));
            process = pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            readers = new Thread[]{reader(process.getInputStream(), out), reader(process.getErrorStream(), err)};
        }

        private static Thread reader(InputStream in, List<String> to) {
            return Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                    for (String l = r.readLine(); l != null; l = r.readLine()) {
                        to.add(l);
                    }
                } catch (IOException e) {
                    to.add("(reading the output failed: " + e + ")");
                }
            });
        }

        int awaitExit() throws InterruptedException {
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                fail("mprun did not end within " + TIMEOUT_SECONDS + " s:\n" + all());
            }
            for (Thread t : readers) {
                t.join(5000);
            }
            return process.exitValue();
        }

        void awaitLine(Predicate<String> wanted) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            while (System.nanoTime() < deadline) {
                synchronized (out) {
                    if (out.stream().anyMatch(wanted)) {
                        return;
                    }
                }
                if (!process.isAlive()) {
                    fail("mprun ended before the line awaited:\n" + all());
                }
                Thread.sleep(20);
            }
            fail("the line awaited did not come within " + TIMEOUT_SECONDS + " s:\n" + all());
        }

        String all() {
            synchronized (out) {
                synchronized (err) {
                    return "--- stdout\n" + String.join("\n", out) + "\n--- stderr\n" + String.join("\n", err);
                }
            }
        }

        @Override
        public void close() {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** @return MPJ_HOME from the environment or the build (scripts/ set it up under .tools/mpj-home) */
    private static Optional<String> mpjHome() {
        for (String home : new String[]{System.getenv("MPJ_HOME"), System.getProperty("gdasync.mpj.home")}) {
            if (home != null && Files.isRegularFile(Path.of(home, "lib", "starter.jar"))) {
                return Optional.of(home);
            }
        }
        return Optional.empty();
    }

    /** @return the modes to run: mpj first when MPJ Express is set up (saying so when it is not) */
    private static String modes() {
        if (mpjHome().isPresent()) {
            return "mpj,host,sa,ki";
        }
        System.out.println("HpgmgLaunchTest: running without mpj: MPJ Express is not set up (no MPJ_HOME, and no "
                + System.getProperty("gdasync.mpj.home") + "/lib/starter.jar; scripts/test and scripts/mprun set it up)");
        return "host,sa,ki";
    }

    /** Runs one timed solve per mode and returns each mode's norm, checking the CSV has a row for each. */
    private List<double[]> solve(int ranks, int log2Box, int boxesPerRank, String modes) throws Exception {
        Path csv = dir.resolve("hpgmg-" + ranks + ".csv");
        try (Job job = new Job("-np", String.valueOf(ranks), "hpgmg", String.valueOf(log2Box), String.valueOf(boxesPerRank),
                "--mode", modes, "--levels", "1", "--solves", "1", "--warmup-seconds", "0", "--quiet", "--csv", csv.toString())) {
            assertEquals(0, job.awaitExit(), job.all());
            List<double[]> norms = new ArrayList<>();
            List<String> seen = new ArrayList<>();
            for (String l : job.out) {
                Matcher m = SUMMARY.matcher(l);
                if (m.matches()) {
                    seen.add(m.group(1));
                    assertEquals(ranks, Integer.parseInt(m.group(2)), l);
                    norms.add(new double[]{Double.parseDouble(m.group(3))});
                }
            }
            assertEquals(List.of(modes.split(",")), seen, "a summary line per mode, in order:\n" + job.all());
            List<String> rows = Files.readAllLines(csv);
            assertEquals(Summary.CSV_HEADER, rows.getFirst());
            for (String mode : seen) {
                assertTrue(rows.stream().anyMatch(r -> r.startsWith(mode + "," + ranks + "," + log2Box + ",")), mode + " in " + rows);
            }
            return norms;
        }
    }

    private static void assertSameNormEverywhere(List<double[]> norms, double upstream, String what) {
        for (double[] n : norms) {
            assertEquals(norms.getFirst()[0], n[0], what + ": every mode gives the same bits");
            assertEquals(upstream, n[0], 1e-9 * upstream, what + ": upstream's norm");
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void the32CubedNormIsUpstreamsInEveryMode(int ranks) throws Exception {
        assertSameNormEverywhere(solve(ranks, 4, 8 / ranks, modes()), HpgmgSolverTest.UPSTREAM_32, ranks + " rank(s)");
    }

    @Test
    void fourRanksAgreeWithUpstreamOn48Cubed() throws Exception {
        assertSameNormEverywhere(solve(4, 4, 7, "host,sa,ki"), UPSTREAM_48, "4 ranks");
    }

    @Test
    void badArgumentsExitWithTwoAndOneLineFromRankZero() throws Exception {
        try (Job job = new Job("-np", "2", "hpgmg", "24", "8")) {
            assertEquals(2, job.awaitExit(), job.all());
            assertTrue(job.err.stream().anyMatch(l -> l.startsWith("[0] hpgmg: box size 24 is not a power of two")), job.all());
            assertFalse(job.err.stream().anyMatch(l -> l.startsWith("[1] hpgmg:")), "rank 1 stays quiet:\n" + job.all());
        }
        try (Job job = new Job("-np", "3", "hpgmg", "4", "1")) {
            assertEquals(2, job.awaitExit(), job.all());
            assertTrue(job.err.stream().anyMatch(l -> l.startsWith("[0] hpgmg: ") && l.contains("more ranks (3) than boxes (1")),
                    job.all());
            assertFalse(job.err.stream().anyMatch(l -> l.startsWith("[1] hpgmg:") || l.startsWith("[2] hpgmg:")), job.all());
        }
    }

    /** @return the pid of the rank's JVM: the launcher's child whose environment says GDASYNC_RANK=rank */
    private static long pidOfRank(Process launcher, int rank) throws IOException {
        for (ProcessHandle child : launcher.children().toList()) {
            Path environ = Path.of("/proc", String.valueOf(child.pid()), "environ");
            if (Files.isReadable(environ)) {
                for (String kv : new String(Files.readAllBytes(environ), StandardCharsets.UTF_8).split("\0")) {
                    if (kv.equals("GDASYNC_RANK=" + rank)) {
                        return child.pid();
                    }
                }
            }
        }
        throw new AssertionError("no child of the launcher runs rank " + rank);
    }

    @ParameterizedTest
    @ValueSource(strings = {"host", "sa", "ki"})
    void aRankKilledMidSolveEndsTheJobWithAnErrorNamingIt(String mode) throws Exception {
        // A long grace: rank 0 must end by itself, not be stopped by the launcher.
        try (Job job = new Job("-np", "2", "--grace", "60", "hpgmg", "4", "4", "--mode", mode, "--levels", "1",
                "--solves", "100000")) {
            job.awaitLine(l -> l.startsWith("[0] FMGSolve... f-cycle"));
            long victim = pidOfRank(job.process, 1);
            long killedAt = System.nanoTime();
            assertTrue(ProcessHandle.of(victim).orElseThrow().destroyForcibly());
            int status = job.awaitExit();
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            assertNotEquals(0, status, job.all());
            String line = job.err.stream().filter(l -> l.startsWith("[0] hpgmg (rank 0): ")).findFirst()
                    .orElseThrow(() -> new AssertionError("rank 0 explains its failure:\n" + job.all()));
            assertTrue(line.contains("rank 1"), "rank 0's error names rank 1: " + line);
            assertFalse(job.err.stream().anyMatch(l -> l.startsWith("mprun: stopped")), "rank 0 ended by itself:\n" + job.all());
            System.out.println("HpgmgLaunchTest: " + mode + ": rank 0 failed " + ms + " ms after rank 1 was killed: " + line);
        }
    }
}
