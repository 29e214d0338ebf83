package dev.gdasync.test.harness;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A command run to its end, as a user runs it from a shell: its exit status and its whole output. A command that
 * outlives its time is killed with everything it started, and fails the test with what it printed.
 */
public final class Command {
    private Command() {
    }

    /** A finished command. */
    public record Ran(List<String> command, int status, String out, String err) {
        /** @return the command, its status and its output, for failure messages */
        public String describe() {
            return String.join(" ", command) + "\nexit status " + status + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    /** @return this JVM's java binary */
    public static String java() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /**
     * Runs a command with GDASYNC_*, SLURM_*, OMPI_*, PMIX_* and CLASSPATH removed from its environment, then
     * {@code env} added.
     */
    public static Ran run(List<String> command, Map<String, String> env, Duration timeout) {
        ProcessBuilder pb = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().keySet().removeIf(k -> k.startsWith("GDASYNC_") || k.startsWith("SLURM_") || k.startsWith("OMPI_")
                || k.startsWith("PMIX_") || k.equals("CLASSPATH"));
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
        return finish(command, p, timeout);
    }

    /** Waits for a started process, killing it and its descendants if it outlives {@code timeout}. */
    public static Ran finish(List<String> command, Process p, Duration timeout) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread a = Thread.ofPlatform().daemon().start(() -> copy(p.getInputStream(), out));
        Thread b = Thread.ofPlatform().daemon().start(() -> copy(p.getErrorStream(), err));
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                kill(p);
                fail(String.join(" ", command) + " did not end within " + timeout.toSeconds() + " s; its output:\n"
                        + out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8));
            }
            a.join(5000);
            b.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill(p);
            fail("interrupted");
        }
        return new Ran(List.copyOf(command), p.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** Kills a process and every process it started. */
    public static void kill(Process p) {
        List<ProcessHandle> all = new ArrayList<>(p.descendants().toList());
        all.add(p.toHandle());
        all.forEach(ProcessHandle::destroyForcibly);
    }

    private static void copy(InputStream in, ByteArrayOutputStream to) {
        try (in) {
            in.transferTo(to);
        } catch (IOException e) {
            // the process is gone
        }
    }
}
