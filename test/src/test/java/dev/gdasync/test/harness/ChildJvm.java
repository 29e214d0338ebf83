package dev.gdasync.test.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A child JVM that runs a main class of this test class path and talks line by line over its standard
 * input and output.
 *
 * <p>Every read has a deadline: a child that does not answer in time, or exits, fails the test with its
 * recent output (stdout and stderr). Its stderr is forwarded to this JVM's stderr with a prefix. Children
 * are expected to exit when their standard input closes, so {@link #close()} (use try-with-resources)
 * closes it, waits a little, then kills the process, and always reaps it: a failed test leaves no
 * process behind.
 */
public final class ChildJvm implements AutoCloseable {
    /** How long a command may take before the child is declared hung. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    private static final Object EOF = new Object();
    private static final int RECENT_LINES = 60;

    private final String name;
    private final Process process;
    private final Writer stdin;
    private final LinkedBlockingQueue<Object> lines = new LinkedBlockingQueue<>();
    private final ArrayDeque<String> recent = new ArrayDeque<>();
    private final Thread stdoutReader;
    private final Thread stderrReader;
    private volatile boolean closed;

    private ChildJvm(String name, Process process) {
        this.name = name;
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.stdoutReader = Thread.ofPlatform().daemon().name("child-" + name + "-stdout")
                .start(() -> pump(process.getInputStream(), true));
        this.stderrReader = Thread.ofPlatform().daemon().name("child-" + name + "-stderr")
                .start(() -> pump(process.getErrorStream(), false));
    }

    /**
     * Starts {@code mainClass} in a new JVM with this JVM's java binary and class path.
     *
     * @param name      a short name for messages and the stderr prefix
     * @param mainClass the class whose main runs
     * @param args      its arguments
     * @return the running child
     */
    public static ChildJvm start(String name, Class<?> mainClass, List<String> args) {
        return start(name, List.of(), mainClass, args);
    }

    /**
     * Starts {@code mainClass} in a new JVM with extra JVM options.
     *
     * @param name       a short name for messages and the stderr prefix
     * @param jvmOptions options placed before the main class (for example -Xint)
     * @param mainClass  the class whose main runs
     * @param args       its arguments
     * @return the running child
     */
    public static ChildJvm start(String name, List<String> jvmOptions, Class<?> mainClass, List<String> args) {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java,
                "--enable-native-access=ALL-UNNAMED",
                // Children are small: a serial GC and C1 only keep their start cheap on a 2-core machine.
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m", "-Xss1m",
                "-cp", System.getProperty("java.class.path")));
        cmd.addAll(jvmOptions);
        cmd.add(mainClass.getName());
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("GDASYNC_JOB_ID");
        pb.environment().remove("GDASYNC_SHM_DIR");
        try {
            return new ChildJvm(name, pb.start());
        } catch (IOException e) {
            throw new IllegalStateException("could not start child JVM " + name + ": " + cmd, e);
        }
    }

    private void pump(InputStream stream, boolean stdout) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                remember((stdout ? "out| " : "err| ") + line);
                if (stdout) {
                    lines.add(line);
                } else {
                    System.err.println("[" + name + " " + process.pid() + "] " + line);
                }
            }
        } catch (IOException e) {
            // the process is gone; EOF below
        } finally {
            if (stdout) {
                lines.add(EOF);
            }
        }
    }

    private void remember(String line) {
        synchronized (recent) {
            if (recent.size() == RECENT_LINES) {
                recent.removeFirst();
            }
            recent.addLast(line);
        }
    }

    /** @return the child's name */
    public String name() {
        return name;
    }

    /** @return the child's pid */
    public long pid() {
        return process.pid();
    }

    /** @return whether the child is still running */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** @return the child's last lines of output, stdout and stderr interleaved as read */
    public String recentOutput() {
        synchronized (recent) {
            return recent.isEmpty() ? "    (no output)" : "    " + String.join("\n    ", recent);
        }
    }

    private String describe() {
        String state = process.isAlive() ? "running" : "exited with status " + process.exitValue();
        return "child " + name + " (pid " + process.pid() + ", " + state + "); its recent output:\n" + recentOutput();
    }

    /**
     * Writes one line to the child's standard input.
     *
     * @param line the line, without a line break
     */
    public void send(String line) {
        if (line.indexOf('\n') >= 0 || line.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("a command is one line: " + line);
        }
        try {
            stdin.write(line);
            stdin.write('\n');
            stdin.flush();
        } catch (IOException e) {
            fail("could not send '" + abbreviate(line) + "' to " + describe(), e);
        }
    }

    /**
     * Reads the child's next line of standard output.
     *
     * @param timeout how long to wait
     * @return the line
     * @throws org.opentest4j.AssertionFailedError if nothing comes in time or the child's output ended
     */
    public String readLine(Duration timeout) {
        Object line;
        try {
            line = lines.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted while waiting for " + describe());
        }
        if (line == null) {
            return fail("no answer within " + timeout.toMillis() + " ms from " + describe());
        }
        if (line == EOF) {
            lines.add(EOF); // later reads fail the same way
            awaitQuietly(Duration.ofSeconds(2));
            return fail("the output of the child ended while waiting for a line: " + describe());
        }
        return (String) line;
    }

    /**
     * Sends a command and reads its one-line answer.
     *
     * @param command the command
     * @param timeout how long the answer may take
     * @return the answer
     */
    public String request(String command, Duration timeout) {
        send(command);
        return readLine(timeout);
    }

    /**
     * Sends a command and reads its one-line answer within {@link #DEFAULT_TIMEOUT}.
     *
     * @param command the command
     * @return the answer
     */
    public String request(String command) {
        return request(command, DEFAULT_TIMEOUT);
    }

    /** Kills the child at once (SIGKILL) and reaps it; it gets no chance to clean up. */
    public void kill() {
        process.destroyForcibly();
        if (!awaitQuietly(Duration.ofSeconds(20))) {
            fail("child " + name + " (pid " + process.pid() + ") survived SIGKILL for 20 s");
        }
    }

    /**
     * Waits for the child to exit by itself.
     *
     * @param timeout how long to wait
     * @return its exit status
     */
    public int awaitExit(Duration timeout) {
        if (!awaitQuietly(timeout)) {
            return fail("child did not exit within " + timeout.toMillis() + " ms: " + describe());
        }
        return process.exitValue();
    }

    private boolean awaitQuietly(Duration timeout) {
        try {
            return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Closes the child's standard input (it should exit), waits up to 10 s, kills it if it did not
     * exit, and reaps it. Never throws; closing twice does nothing.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stdin.close();
        } catch (IOException e) {
            // already gone
        }
        boolean interrupted = Thread.interrupted();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                System.err.println("[" + name + "] did not exit 10 s after its stdin closed; killing it");
                process.destroyForcibly();
                process.waitFor(20, TimeUnit.SECONDS);
            }
            stdoutReader.join(2_000);
            stderrReader.join(2_000);
        } catch (InterruptedException e) {
            interrupted = true;
            process.destroyForcibly();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }

    @Override
    public String toString() {
        return "ChildJvm{" + name + ", pid " + process.pid() + "}";
    }
}
