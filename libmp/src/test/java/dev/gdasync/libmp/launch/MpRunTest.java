package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import dev.gdasync.libmp.testutil.UserPrograms;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The launcher end to end: a child JVM running MpRun, which starts the ranks (RankMain, as "testrank"). */
@Timeout(120)
class MpRunTest {
    static final Duration WAIT = Duration.ofSeconds(60);

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
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", "testrank", "gather")) {
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
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", "--grace", "0.5", "testrank", "exit", "1", "3")) {
            List<Long> others = readyPids(mprun, 0, 2);
            int status = mprun.awaitExit(WAIT);
            assertEquals(3, status, mprun.describe());
            List<String> err = mprun.stderr();
            // The rank's own explanation first, every line of it; then the launcher's account, and nothing after it.
            int explained = err.indexOf("[1] rank 1 gives up with status 3");
            int reported = err.indexOf("mprun: rank 1 exited with status 3");
            assertTrue(explained >= 0 && reported > explained, mprun.describe());
            assertEquals(200, err.stream().filter(l -> l.startsWith("[1] rank 1 explains, line ")).count(), mprun.describe());
            assertEquals(List.of("mprun: rank 1 exited with status 3",
                    "mprun: stopped ranks 0 and 2 (still running 0.5 s after rank 1 failed)"), err.subList(reported, err.size()),
                    mprun.describe());
            assertAllGone(others, mprun.describe());
        }
    }

    @Test
    void aRankKilledMidRunFailsTheOthersWithAClearErrorAndTheLauncher() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", "testrank", "victim", "2")) {
            List<Long> pids = readyPids(mprun, 0, 1, 2);
            assertTrue(ProcessHandle.of(pids.get(2)).orElseThrow().destroyForcibly());
            assertEquals(137, mprun.awaitExit(WAIT), mprun.describe());
            List<String> out = mprun.stdout();
            assertTrue(out.stream().anyMatch(l -> l.startsWith("[0] failed: rank 0 of job mprun-") && l.contains(": rank 2's process is gone")),
                    mprun.describe());
            assertTrue(out.stream().anyMatch(l -> l.startsWith("[1] failed: rank 1 of job mprun-") && l.contains(": rank 2's process is gone")),
                    mprun.describe());
            List<String> err = mprun.stderr();
            assertEquals(List.of("mprun: rank 2 was killed by SIGKILL (exit status 137)", "mprun: ranks 0 and 1 exited with status 1"),
                    err.stream().filter(l -> l.startsWith("mprun: ")).toList(), "they ended by themselves: " + mprun.describe());
            assertAllGone(pids, mprun.describe());
        }
    }

    @Test
    void sigtermToTheLauncherStopsEveryRank() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", "testrank", "hang")) {
            List<Long> ranks = readyPids(mprun, 0, 1);
            List<Long> all = new ArrayList<>(mprun.process().descendants().map(ProcessHandle::pid).toList());
            assertTrue(all.containsAll(ranks), "the ranks are the launcher's children");
            // SIGTERM; through the handle, because Process.destroy() also closes our ends of its output pipes.
            assertTrue(mprun.process().toHandle().destroy());
            int status = mprun.awaitExit(WAIT);
            assertEquals(143, status, mprun.describe());
            assertEquals(List.of("mprun: interrupted; stopping every rank"),
                    mprun.stderr().stream().filter(l -> l.startsWith("mprun: ")).toList(), mprun.describe());
            assertAllGone(all, mprun.describe());
            assertFalse(mprun.process().isAlive());
        }
    }

    @Test
    void sigkillToTheLauncherStillEndsEveryRank() throws Exception {
        Assumptions.assumeFalse(ParentDeath.prefix().isEmpty(), "no setpriv with --pdeathsig on this machine");
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", "testrank", "hang")) {
            List<Long> ranks = readyPids(mprun, 0, 1);
            mprun.process().toHandle().destroyForcibly();
            assertEquals(137, mprun.awaitExit(WAIT), mprun.describe());
            assertAllGone(ranks, mprun.describe());
        }
    }

    @Test
    void badCommandLinesExitWith2() {
        try (ChildProcess unknown = MpRunProcess.start("-np", "2", "nosuchapp");
             ChildProcess missing = MpRunProcess.start("-np", "2", "org.example.Missing")) {
            assertEquals(2, unknown.awaitExit(WAIT), unknown.describe());
            assertEquals(List.of("mprun: unknown program 'nosuchapp': not a short name (known: mpexercise, testrank) and no class"
                            + " nosuchapp on the class path (the launcher's jars only)", "Run 'mprun --help' for the options."),
                    unknown.stderr(), unknown.describe());
            assertEquals(2, missing.awaitExit(WAIT), missing.describe());
            assertEquals(List.of("mprun: the main class org.example.Missing is not on the class path (the launcher's jars only):"
                    + " give its folder or jar with --classpath", "Run 'mprun --help' for the options."), missing.stderr(), missing.describe());
        }
    }

    /** A user's program, as a user writes one: no package, compiled into a folder of its own. */
    static final String PLAIN_HELLO = """
            import dev.gdasync.libmp.bootstrap.EnvBootstrap;

            public class PlainHello {
                public static void main(String[] args) throws Exception {
                    try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
                        boot.barrier();
                        System.out.println("plain hello from rank " + boot.rank() + " of " + boot.size() + ": " + String.join(" ", args));
                    }
                }
            }
            """;

    /** The same in a package, packed into a jar. */
    static final String JAR_HELLO = """
            package demo;

            import dev.gdasync.libmp.bootstrap.EnvBootstrap;

            public class JarHello {
                public static void main(String[] args) throws Exception {
                    try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
                        boot.barrier();
                        System.out.println("jar hello from rank " + boot.rank() + " of " + boot.size());
                    }
                }
            }
            """;

    @Test
    void aUsersProgramWithoutAPackageRunsFromAFolderGivenByOptionOrByCLASSPATH(@TempDir Path dir) throws IOException {
        Path classes = UserPrograms.compile(dir.resolve("classes"), Map.of("PlainHello.java", PLAIN_HELLO));
        try (ChildProcess byOption = MpRunProcess.start("-np", "2", "--classpath", classes.toString(), "PlainHello",
                "a", "--b");
             ChildProcess byVariable = MpRunProcess.start(Map.of("CLASSPATH", classes.toString()), "-np", "2",
                     "PlainHello")) {
            assertEquals(0, byOption.awaitExit(WAIT), byOption.describe());
            for (int r = 0; r < 2; r++) {
                assertTrue(byOption.stdout().contains("[" + r + "] plain hello from rank " + r + " of 2: a --b"), byOption.describe());
            }
            assertEquals(0, byVariable.awaitExit(WAIT), byVariable.describe());
            assertTrue(byVariable.stdout().contains("[1] plain hello from rank 1 of 2: "), byVariable.describe());
        }
    }

    @Test
    void aUsersProgramRunsFromAJarNamedByTheVariable(@TempDir Path dir) throws IOException {
        Path classes = UserPrograms.compile(dir.resolve("classes"), Map.of("demo/JarHello.java", JAR_HELLO));
        Path jar = UserPrograms.jar(classes, dir.resolve("hello.jar"));
        try (ChildProcess mprun = MpRunProcess.start(Map.of("GDASYNC_CLASSPATH", jar.toString()), "-np", "2",
                "demo.JarHello")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int r = 0; r < 2; r++) {
                assertTrue(mprun.stdout().contains("[" + r + "] jar hello from rank " + r + " of 2"), mprun.describe());
            }
        }
    }

    @Test
    void ctrlCSaysInterruptedAndStopsEveryRank() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", "testrank", "hang")) {
            List<Long> ranks = readyPids(mprun, 0, 1);
            String ignored = ignoredSignals(mprun.process().pid());
            // A shell that starts jobs in the background makes them ignore SIGINT, and the JVM keeps it so.
            Assumptions.assumeTrue((Long.parseLong(ignored, 16) & 2) == 0,
                    "the launcher inherited an ignored SIGINT (SigIgn " + ignored + "): SIGTERM is tested instead");
            Process kill = new ProcessBuilder("kill", "-INT", Long.toString(mprun.process().pid())).inheritIO().start();
            assertEquals(0, kill.waitFor());
            assertEquals(130, mprun.awaitExit(WAIT), mprun.describe());
            assertEquals(List.of("mprun: interrupted; stopping every rank"),
                    mprun.stderr().stream().filter(l -> l.startsWith("mprun: ")).toList(), mprun.describe());
            assertAllGone(ranks, mprun.describe());
        }
    }

    private static String ignoredSignals(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("SigIgn:")) {
                return line.substring("SigIgn:".length()).strip();
            }
        }
        throw new IllegalStateException("no SigIgn in /proc/" + pid + "/status");
    }

    @Test
    void aRankKilledWithSigkillLeavesNothingInSharedMemoryOnceTheLauncherReturns(@TempDir Path base) throws Exception {
        Path root = ShmDirectory.userRoot(base);
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", "--grace", "10", "--jvm-opt", "-Dgdasync.shm.dir=" + base,
                "mpexercise", "victim", "1")) {
            List<Long> pids = readyPids(mprun, 0, 1);
            List<Path> jobs = jobDirectories(root);
            assertEquals(1, jobs.size(), "the job's directory while it runs: " + jobs);
            try (var processes = Files.list(jobs.getFirst())) {
                assertEquals(2, processes.count(), "one directory per rank");
            }
            assertTrue(ProcessHandle.of(pids.get(1)).orElseThrow().destroyForcibly());
            assertTrue(mprun.awaitExit(WAIT) != 0, "the launcher fails after a rank was killed: " + mprun.describe());
            assertEquals(List.of(), jobDirectories(root), "nothing of the job is left: " + mprun.describe());
        }
    }

    private static List<Path> jobDirectories(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (var jobs = Files.list(root)) {
            return jobs.filter(p -> p.getFileName().toString().startsWith("job-")).toList();
        }
    }
}
