package dev.gdasync.libmp.launch;

import dev.gdasync.libmp.testutil.ChildProcess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The launcher end to end: a child JVM running MpRun, which starts the ranks (RankMain, as "testrank"). */
@Timeout(120)
class MpRunTest {
    static final Duration WAIT = Duration.ofSeconds(60);

    static ChildProcess launch(String... args) {
        List<String> a = new ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1"));
        a.addAll(List.of(args));
        return ChildProcess.start("mprun", ChildProcess.javaCommand(MpRun.class, a),
                Map.of("GDASYNC_BOOTSTRAP_TIMEOUT_MS", "30000"));
    }

    static List<Long> readyPids(ChildProcess launcher, int... ranks) {
        List<Long> pids = new ArrayList<>();
        for (int r : ranks) {
            String line = launcher.awaitLine(l -> l.startsWith("[" + r + "] ready "), WAIT);
            pids.add(Long.parseLong(line.substring(line.lastIndexOf(' ') + 1)));
        }
        return pids;
    }

    static void assertAllGone(List<Long> pids, String context) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        for (long pid : pids) {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                assertTrue(System.nanoTime() < deadline, "process " + pid + " survived: " + context);
                Thread.sleep(20);
            }
        }
    }

    @Test
    void twoRanksWithPrefixedOutputExitZero() {
        try (ChildProcess mprun = launch("-np", "2", "testrank", "gather")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            List<String> out = mprun.stdout();
            for (String l : out) {
                assertTrue(l.startsWith("[0] ") || l.startsWith("[1] "), "unprefixed line '" + l + "': " + mprun.describe());
            }
            for (int r = 0; r < 2; r++) {
                String prefix = "[" + r + "] ";
                assertTrue(out.stream().anyMatch(l -> l.startsWith(prefix + "joined rank ") && l.contains(" job mprun-")
                        && l.endsWith(" source the gdasync launcher")), mprun.describe());
                assertTrue(out.contains(prefix + "gathered [rank0/6, rank1/1006]"), mprun.describe());
                assertTrue(out.contains(prefix + "done 2"), mprun.describe());
                assertTrue(mprun.stderr().contains(prefix + "stderr of rank " + r), mprun.describe());
            }
        }
    }

    @Test
    void aRankExitingWithStatus3StopsTheOthersAndTheLauncherFails() throws Exception {
        try (ChildProcess mprun = launch("-np", "3", "--grace", "0.5", "testrank", "exit", "1", "3")) {
            List<Long> others = readyPids(mprun, 0, 2);
            int status = mprun.awaitExit(WAIT);
            assertEquals(3, status, mprun.describe());
            List<String> err = mprun.stderr();
            assertTrue(err.contains("mprun: rank 1 exited with status 3"), mprun.describe());
            assertTrue(err.contains("mprun: killing rank(s) [0, 2] (still running 0.5 s after rank 1 failed)"), mprun.describe());
            assertAllGone(others, mprun.describe());
        }
    }

    @Test
    void aRankKilledMidRunFailsTheOthersWithAClearErrorAndTheLauncher() throws Exception {
        try (ChildProcess mprun = launch("-np", "3", "testrank", "victim", "2")) {
            List<Long> pids = readyPids(mprun, 0, 1, 2);
            assertTrue(ProcessHandle.of(pids.get(2)).orElseThrow().destroyForcibly());
            assertEquals(137, mprun.awaitExit(WAIT), mprun.describe());
            List<String> out = mprun.stdout();
            assertTrue(out.stream().anyMatch(l -> l.startsWith("[0] failed: rank 0 of job mprun-") && l.contains(": rank 2's process is gone")),
                    mprun.describe());
            assertTrue(out.stream().anyMatch(l -> l.startsWith("[1] failed: rank 1 of job mprun-") && l.contains(": rank 2's process is gone")),
                    mprun.describe());
            List<String> err = mprun.stderr();
            assertTrue(err.contains("mprun: rank 2 was killed by SIGKILL (exit status 137)"), mprun.describe());
            assertTrue(err.contains("mprun: rank 0 exited with status 1"), mprun.describe());
            assertTrue(err.contains("mprun: rank 1 exited with status 1"), mprun.describe());
            assertFalse(err.stream().anyMatch(l -> l.startsWith("mprun: killing")), "they ended by themselves: " + mprun.describe());
            assertAllGone(pids, mprun.describe());
        }
    }

    @Test
    void sigtermToTheLauncherStopsEveryRank() throws Exception {
        try (ChildProcess mprun = launch("-np", "2", "testrank", "hang")) {
            List<Long> ranks = readyPids(mprun, 0, 1);
            List<Long> all = new ArrayList<>(mprun.process().descendants().map(ProcessHandle::pid).toList());
            assertTrue(all.containsAll(ranks), "the ranks are the launcher's children");
            // SIGTERM; through the handle, because Process.destroy() also closes our ends of its output pipes.
            assertTrue(mprun.process().toHandle().destroy());
            int status = mprun.awaitExit(WAIT);
            assertNotEquals(0, status, mprun.describe());
            assertTrue(mprun.stderr().stream().anyMatch(l -> l.startsWith("mprun: killing rank(s) [0, 1] (the launcher was interrupted)")),
                    mprun.describe());
            assertAllGone(all, mprun.describe());
            assertFalse(mprun.process().isAlive());
        }
    }

    @Test
    void sigkillToTheLauncherStillEndsEveryRank() throws Exception {
        Assumptions.assumeFalse(ParentDeath.prefix().isEmpty(), "no setpriv with --pdeathsig on this machine");
        try (ChildProcess mprun = launch("-np", "2", "testrank", "hang")) {
            List<Long> ranks = readyPids(mprun, 0, 1);
            mprun.process().toHandle().destroyForcibly();
            assertEquals(137, mprun.awaitExit(WAIT), mprun.describe());
            assertAllGone(ranks, mprun.describe());
        }
    }

    @Test
    void badCommandLinesExitWith2() {
        try (ChildProcess unknown = launch("-np", "2", "nosuchapp");
             ChildProcess missing = launch("-np", "2", "org.example.Missing")) {
            assertEquals(2, unknown.awaitExit(WAIT), unknown.describe());
            assertTrue(unknown.stderr().getFirst().startsWith("mprun: unknown application 'nosuchapp'; known by short name: mpexercise, testrank"),
                    unknown.describe());
            assertEquals(2, missing.awaitExit(WAIT), missing.describe());
            assertTrue(missing.stderr().getFirst().startsWith("mprun: the main class org.example.Missing is not on the class path"),
                    missing.describe());
        }
    }
}
