package dev.gdasync.test.launchers;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What the real launchers' tests share: finding programs, the repository, checking that tasks are gone, and the MPJ
 * Express program they start over gdasync.
 */
final class Launchers {
    private static final Pattern READY = Pattern.compile("ready (\\d+)");

    private Launchers() {
    }

    /** @return the program's path on PATH, or null */
    static String onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    /** @return the repository's root (the surefire property gdasync.root, else the parent folder) */
    static Path root() {
        return Path.of(System.getProperty("gdasync.root", "..")).toAbsolutePath().normalize();
    }

    /** @return the pids of the {@code ready PID} lines in a job's output */
    static List<Long> readyPids(String output) {
        List<Long> pids = new ArrayList<>();
        Matcher m = READY.matcher(output);
        while (m.find()) {
            pids.add(Long.parseLong(m.group(1)));
        }
        return pids;
    }

    /**
     * The java arguments of an unmodified MPJ Express program over gdasync: the MPJ ping-pong of the apps, every
     * message's pattern checked, started through {@code MpjMain} with MPJ's own jars added to this test's class path
     * (the project has them in provided scope, as {@code scripts/mprun --mpj} adds them). Skips the test, saying so,
     * when {@code MPJ_HOME} has no MPJ Express.
     *
     * @param launcher the launcher's name for the skip message
     * @return {@code -cp CP MpjMain MpjPingPong ARGS...}
     */
    static List<String> mpjPingPong(String launcher) {
        String home = System.getenv("MPJ_HOME");
        boolean mpj = home != null && Files.isRegularFile(Path.of(home, "lib", "mpj.jar"));
        if (!mpj) {
            System.out.println("SKIPPED (" + launcher + ", MPJ Express): MPJ_HOME has no lib/mpj.jar (scripts/test sets"
                    + " it up)");
        }
        assumeTrue(mpj, "MPJ_HOME has no lib/mpj.jar");
        String cp = System.getProperty("java.class.path") + File.pathSeparator + Path.of(home, "lib", "mpj.jar")
                + File.pathSeparator + Path.of(home, "lib", "log4j-1.2.jar");
        return List.of("-cp", cp, "dev.gdasync.libmp.mpj.MpjMain", "dev.gdasync.apps.pingpong.MpjPingPong",
                "--sizes", "8,4096", "--iters", "200", "--validate");
    }

    /** Asserts that the {@link #mpjPingPong} job ended well: rank 0 printed a line per size, every message checked. */
    static void assertMpjPingPongRan(int status, String out, String context) {
        assertEquals(0, status, context);
        assertTrue(out.contains("MPJ-PINGPONG-RESULT 8 200 "), context);
        assertTrue(out.contains("MPJ-PINGPONG-RESULT 4096 200 "), context);
    }

    /** Fails unless every one of these processes is gone within 10 s (the launcher reaps its tasks as it ends). */
    static void assertGone(List<Long> pids, String context) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        for (long pid : pids) {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                if (System.nanoTime() > end) {
                    fail("task process " + pid + " outlived its job: " + context);
                }
                Thread.sleep(50);
            }
        }
    }
}
