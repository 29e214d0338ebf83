package dev.gdasync.test.launchers;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.fail;

/** What the real launchers' tests share: finding programs, the repository, and checking that tasks are gone. */
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
