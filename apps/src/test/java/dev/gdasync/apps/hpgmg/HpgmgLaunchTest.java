package dev.gdasync.apps.hpgmg;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The app end to end under the launcher ({@code dev.gdasync.libmp.launch.MpRun}, what scripts/mprun runs):
 * rank JVMs, one timed solve per mode. The 32^3 norm in every mode on 1 and 2 ranks (mpj too where MPJ
 * Express is set up), 48^3 on 4 ranks against upstream's C, bad arguments, and a rank killed mid-solve.
 */
class HpgmgLaunchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(240);
    /** Upstream's C, {@code hpgmg-fv 4 27}: the 48^3 grid that 4 ranks with 7 boxes each make. */
    private static final double UPSTREAM_48 = 1.981469376954870e-04;
    private static final Pattern SUMMARY = Pattern.compile(
            "\\[0]   \\[(\\w+)] h=\\S+  DOF=\\S+  time=\\S+  DOF/s=\\S+  MPI=(\\d+)  OMP=1  norm=(\\S+)");

    @TempDir
    Path dir;

    /** The launcher with serial-GC ranks, MPJ_HOME only when MPJ Express is set up, and no CLASSPATH. */
    private static ChildProcess.Builder launcher(String... args) {
        List<String> a = new ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC"));
        a.addAll(List.of(args));
        String mpj = Launcher.mpjHome();
        ChildProcess.Builder b = Launcher.mprun(a).removeEnvironment(k -> k.equals("MPJ_HOME") || k.equals("CLASSPATH"));
        return mpj == null ? b : b.environment(Map.of("MPJ_HOME", mpj));
    }

    /** @return the modes to run: mpj first when MPJ Express is set up (saying so when it is not) */
    private static String modes() {
        if (Launcher.mpjHome() != null) {
            return "mpj,host,sa,ki";
        }
        System.out.println("HpgmgLaunchTest: running without mpj: MPJ Express is not set up (no MPJ_HOME, and no "
                + System.getProperty("gdasync.mpj.home") + "/lib/starter.jar; scripts/test and scripts/mprun set it up)");
        return "host,sa,ki";
    }

    /** Runs one timed solve per mode and returns each mode's norm, checking the CSV has a row for each. */
    private List<double[]> solve(int ranks, int log2Box, int boxesPerRank, String modes) throws Exception {
        Path csv = dir.resolve("hpgmg-" + ranks + ".csv");
        try (ChildProcess job = launcher("-np", String.valueOf(ranks), "hpgmg", String.valueOf(log2Box),
                String.valueOf(boxesPerRank), "--mode", modes, "--levels", "1", "--solves", "1", "--warmup-seconds", "0",
                "--quiet", "--csv", csv.toString()).start()) {
            assertEquals(0, job.awaitExit(TIMEOUT), job.describe());
            List<double[]> norms = new ArrayList<>();
            List<String> seen = new ArrayList<>();
            for (String l : job.stdout()) {
                Matcher m = SUMMARY.matcher(l);
                if (m.matches()) {
                    seen.add(m.group(1));
                    assertEquals(ranks, Integer.parseInt(m.group(2)), l);
                    norms.add(new double[]{Double.parseDouble(m.group(3))});
                }
            }
            assertEquals(List.of(modes.split(",")), seen, "a summary line per mode, in order:\n" + job.describe());
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
        try (ChildProcess job = launcher("-np", "2", "hpgmg", "24", "8").start()) {
            assertEquals(2, job.awaitExit(TIMEOUT), job.describe());
            assertTrue(job.stderr().stream().anyMatch(l -> l.startsWith("[0] hpgmg: box size 24 is not a power of two")),
                    job.describe());
            assertFalse(job.stderr().stream().anyMatch(l -> l.startsWith("[1] hpgmg:")),
                    "rank 1 stays quiet:\n" + job.describe());
        }
        try (ChildProcess job = launcher("-np", "3", "hpgmg", "4", "1").start()) {
            assertEquals(2, job.awaitExit(TIMEOUT), job.describe());
            assertTrue(job.stderr().stream().anyMatch(l -> l.startsWith("[0] hpgmg: ")
                            && l.contains("more ranks (3) than boxes (1")),
                    job.describe());
            assertFalse(job.stderr().stream().anyMatch(l -> l.startsWith("[1] hpgmg:") || l.startsWith("[2] hpgmg:")),
                    job.describe());
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
        try (ChildProcess job = launcher("-np", "2", "--grace", "60", "hpgmg", "4", "4", "--mode", mode, "--levels", "1",
                "--solves", "100000").start()) {
            job.awaitLine(l -> l.startsWith("[0] FMGSolve... f-cycle"), TIMEOUT);
            long victim = pidOfRank(job.process(), 1);
            long killedAt = System.nanoTime();
            assertTrue(ProcessHandle.of(victim).orElseThrow().destroyForcibly());
            int status = job.awaitExit(TIMEOUT);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            assertNotEquals(0, status, job.describe());
            String line = job.stderr().stream().filter(l -> l.startsWith("[0] hpgmg (rank 0): ")).findFirst()
                    .orElseThrow(() -> new AssertionError("rank 0 explains its failure:\n" + job.describe()));
            assertTrue(line.contains("rank 1"), "rank 0's error names rank 1: " + line);
            assertFalse(job.stderr().stream().anyMatch(l -> l.startsWith("mprun: stopped")),
                    "rank 0 ended by itself:\n" + job.describe());
            System.out.println("HpgmgLaunchTest: " + mode + ": rank 0 failed " + ms + " ms after rank 1 was killed: " + line);
        }
    }
}
