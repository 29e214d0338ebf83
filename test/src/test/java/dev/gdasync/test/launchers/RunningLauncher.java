package dev.gdasync.test.launchers;

import dev.gdasync.test.harness.Command;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A launcher ({@code srun}, {@code mpirun}) running in the background while a test acts on its tasks: its output is
 * collected line by line as it comes, so the test can wait for the tasks' {@code ready PID} lines, then kill a task
 * or cancel the job, then wait for the end.
 */
final class RunningLauncher implements AutoCloseable {
    private static final Pattern READY = Pattern.compile("ready (\\d+)");

    private final List<String> command;
    private final Process process;
    private final List<String> lines = new ArrayList<>();
    private final Thread[] readers = new Thread[2];

    private RunningLauncher(List<String> command, Process process) {
        this.command = command;
        this.process = process;
        readers[0] = Thread.ofPlatform().daemon().start(() -> collect(process.getInputStream()));
        readers[1] = Thread.ofPlatform().daemon().start(() -> collect(process.getErrorStream()));
    }

    /**
     * Starts a command with the project's variables (GDASYNC_*, SLURM_*, OMPI_*, PMIX_*, CLASSPATH) removed from its
     * environment, then {@code env} added, and standard input from /dev/null.
     */
    static RunningLauncher start(List<String> command, Map<String, String> env) {
        ProcessBuilder pb = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().keySet().removeIf(k -> k.startsWith("GDASYNC_") || k.startsWith("SLURM_") || k.startsWith("OMPI_")
                || k.startsWith("PMIX_") || k.equals("CLASSPATH"));
        pb.environment().putAll(env);
        try {
            return new RunningLauncher(List.copyOf(command), pb.start());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    private void collect(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                synchronized (lines) {
                    lines.add(line);
                    lines.notifyAll();
                }
            }
        } catch (IOException e) {
            // the process is gone
        }
    }

    /** @return the pids of the {@code ready PID} lines, once there are {@code count} of them */
    List<Long> awaitReady(int count, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        synchronized (lines) {
            while (true) {
                List<Long> pids = new ArrayList<>();
                for (String l : lines) {
                    Matcher m = READY.matcher(l);
                    if (m.find()) {
                        pids.add(Long.parseLong(m.group(1)));
                    }
                }
                if (pids.size() >= count) {
                    return pids;
                }
                long left = end - System.nanoTime();
                if (left <= 0 || !process.isAlive() && pids.size() < count) {
                    fail("expected " + count + " 'ready PID' lines; " + describe());
                }
                TimeUnit.NANOSECONDS.timedWait(lines, Math.min(left, 100_000_000L));
            }
        }
    }

    /** Waits for the launcher's end (killing it and its descendants past the timeout, which fails the test). */
    Command.Ran finish(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            close();
            fail(String.join(" ", command) + " did not end within " + timeout.toSeconds() + " s; " + describe());
        }
        for (Thread t : readers) {
            t.join(5000);
        }
        return new Command.Ran(command, process.exitValue(), output(), "");
    }

    /** @return everything printed so far, standard output and error interleaved as they came */
    String output() {
        synchronized (lines) {
            return String.join("\n", lines) + "\n";
        }
    }

    String describe() {
        return String.join(" ", command) + "\n--- output\n" + output();
    }

    /** Kills the launcher and everything it started here, if still running. */
    @Override
    public void close() {
        if (process.isAlive()) {
            Command.kill(process);
        }
    }
}
