package dev.gdasync.gdsync.testutil;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A child process of a test, most often a JVM of this test's class path: the one harness every module's tests start
 * children with (gdsync's test jar shares it).
 *
 * <p>Its standard output and error are collected line by line. Every wait has a deadline and fails the test with the
 * child's state and output ({@link #describe()}); a child that does not exit in time is killed, with everything it
 * started, and the failure says so. {@link #close()} (use try-with-resources) kills whatever is left and reaps it, so
 * a failed test leaves no process behind.
 *
 * <p>The child sees this JVM's environment without the variables a launcher gives a rank ({@code GDASYNC_*},
 * {@code SLURM_*}, {@code OMPI_*}, {@code PMIX_*}): the test decides what it sees. Its standard input is closed at the
 * start unless {@link Builder#keepStdinOpen} says otherwise (children that talk over stdin, or exit when it ends).
 */
public final class ChildProcess implements AutoCloseable {
    /** JVM options that keep small child JVMs cheap to start on a 2-core machine: a serial GC, C1 only, a small heap. */
    public static final List<String> LIGHT_JVM = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m");
    /** At most this many lines of each stream go into {@link #describe()}; {@link #stdout()} has them all. */
    private static final int DESCRIBED_LINES = 200;
    private static final Duration REAP_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration PUMP_JOIN = Duration.ofSeconds(5);

    private final String name;
    private final Process process;
    private final Writer stdin;
    private final Duration exitGrace;
    private final Output stdout = new Output();
    private final Output stderr = new Output();
    private final Thread outPump;
    private final Thread errPump;
    /** The next stdout line {@link #readLine} returns; guarded by {@code stdout}. */
    private int nextLine;
    /** Guarded by this. */
    private boolean closed;

    private ChildProcess(String name, Process process, boolean stdinOpen, Duration exitGrace, boolean echoStderr) {
        this.name = name;
        this.process = process;
        this.exitGrace = exitGrace;
        OutputStream in = process.getOutputStream();
        if (stdinOpen) {
            this.stdin = new OutputStreamWriter(in, StandardCharsets.UTF_8);
        } else {
            this.stdin = null;
            closeQuietly(in);
        }
        String echo = echoStderr ? "[" + name + " " + process.pid() + "] " : null;
        this.outPump = Thread.ofPlatform().daemon().name(name + "-out")
                .start(() -> stdout.pump(process.getInputStream(), null));
        this.errPump = Thread.ofPlatform().daemon().name(name + "-err")
                .start(() -> stderr.pump(process.getErrorStream(), echo));
    }

    /** @return this JVM's java binary */
    public static String java() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /**
     * A light JVM ({@link #LIGHT_JVM}) that runs {@code mainClass} of this test class path.
     *
     * @param mainClass the class whose main runs
     * @param args      its arguments
     * @return the command line
     */
    public static List<String> javaCommand(Class<?> mainClass, List<String> args) {
        return javaCommand(List.of(), mainClass, args);
    }

    /**
     * A light JVM ({@link #LIGHT_JVM}) with more options that runs {@code mainClass} of this test class path.
     *
     * @param jvmOptions options after the light ones, before the main class (system properties, -Xint, ...)
     * @param mainClass  the class whose main runs
     * @param args       its arguments
     * @return the command line
     */
    public static List<String> javaCommand(List<String> jvmOptions, Class<?> mainClass, List<String> args) {
        List<String> options = new ArrayList<>(LIGHT_JVM);
        options.addAll(jvmOptions);
        return fullJavaCommand(options, mainClass, args);
    }

    /**
     * A JVM with this JVM's defaults (its GC, both JIT compilers) that runs {@code mainClass} of this test class path:
     * for children that measure (C2's escape analysis decides what allocates) or need the heap a real run has.
     *
     * @param jvmOptions options before the main class
     * @param mainClass  the class whose main runs
     * @param args       its arguments
     * @return the command line
     */
    public static List<String> fullJavaCommand(List<String> jvmOptions, Class<?> mainClass, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(java(), "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * @param name    a short name for messages and thread names
     * @param command the command line ({@link #javaCommand} for a JVM of this class path)
     * @return a builder for the child
     */
    public static Builder builder(String name, List<String> command) {
        return new Builder(name, command);
    }

    /**
     * Starts a process with its standard input closed.
     *
     * @param name    a short name for messages
     * @param command the command line
     * @param env     variables to set (a null value removes the variable)
     * @return the running child
     */
    public static ChildProcess start(String name, List<String> command, Map<String, String> env) {
        return builder(name, command).environment(env).start();
    }

    /** How a child starts: its command, environment and standard input. */
    public static final class Builder {
        private final String name;
        private final List<String> command;
        private final Map<String, String> env = new HashMap<>();
        private final List<Predicate<String>> removed = new ArrayList<>();
        private boolean stdinOpen;
        private Duration exitGrace = Duration.ZERO;
        private boolean echoStderr;
        private boolean mergeStderr;

        private Builder(String name, List<String> command) {
            this.name = name;
            this.command = List.copyOf(command);
        }

        /**
         * @param variables variables to set; a null value removes the variable
         * @return this
         */
        public Builder environment(Map<String, String> variables) {
            env.putAll(variables);
            return this;
        }

        /**
         * @param names which of this JVM's variables the child does not get (set ones by {@link #environment} stay)
         * @return this
         */
        public Builder removeEnvironment(Predicate<String> names) {
            removed.add(names);
            return this;
        }

        /**
         * Keeps the child's standard input open for {@link #send}; {@link #close()} closes it first, and a child that
         * exits when its input ends gets {@code exitGrace} to do so before it is killed.
         *
         * @param exitGrace how long {@link #close()} waits for the child after closing its input (may be zero)
         * @return this
         */
        public Builder keepStdinOpen(Duration exitGrace) {
            this.stdinOpen = true;
            this.exitGrace = exitGrace;
            return this;
        }

        /**
         * Copies each line of the child's standard error to this JVM's, prefixed with its name and pid, as it comes
         * (it is collected as well).
         *
         * @return this
         */
        public Builder echoStderr() {
            this.echoStderr = true;
            return this;
        }

        /**
         * Sends the child's standard error into its standard output, one stream interleaved as the child wrote it
         * ({@link #stderr()} stays empty).
         *
         * @return this
         */
        public Builder mergeStderr() {
            this.mergeStderr = true;
            return this;
        }

        /** @return the running child */
        public ChildProcess start() {
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(mergeStderr);
            Map<String, String> e = pb.environment();
            e.keySet().removeIf(k -> k.startsWith("GDASYNC_") || k.startsWith("SLURM_") || k.startsWith("OMPI_")
                    || k.startsWith("PMIX_") || removed.stream().anyMatch(p -> p.test(k)));
            env.forEach((k, v) -> {
                if (v == null) {
                    e.remove(k);
                } else {
                    e.put(k, v);
                }
            });
            try {
                return new ChildProcess(name, pb.start(), stdinOpen, exitGrace, echoStderr);
            } catch (IOException ex) {
                throw new IllegalStateException("cannot start " + name + ": " + command, ex);
            }
        }

        /**
         * Starts the child and waits for it to exit; one that does not exit in time is killed and the test fails.
         *
         * @param timeout how long it may run
         * @return its exit status and output
         */
        public Finished run(Duration timeout) {
            try (ChildProcess child = start()) {
                int status = child.awaitExit(timeout);
                return new Finished(status, child.stdoutText(), child.stderrText());
            }
        }
    }

    /**
     * A child that ran to its end.
     *
     * @param status its exit status
     * @param out    its standard output, each line ending with a line break
     * @param err    its standard error, likewise
     */
    public record Finished(int status, String out, String err) {
        /** @return the status and both outputs, for failure messages */
        public String all() {
            return "exit status " + status + "\n--- stdout\n" + out + "--- stderr\n" + err;
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

    /** @return the process, for signals other than SIGKILL and for its descendants */
    public Process process() {
        return process;
    }

    /** @return whether the child is still running */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** @return the stdout lines so far */
    public List<String> stdout() {
        return stdout.lines();
    }

    /** @return the stderr lines so far */
    public List<String> stderr() {
        return stderr.lines();
    }

    /** @return the stdout so far as text, each line ending with a line break */
    public String stdoutText() {
        return stdout.text();
    }

    /** @return the stderr so far as text, each line ending with a line break */
    public String stderrText() {
        return stderr.text();
    }

    /**
     * Writes one line to the child's standard input ({@link Builder#keepStdinOpen}).
     *
     * @param line the line, without a line break
     */
    public void send(String line) {
        if (line.indexOf('\n') >= 0 || line.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("a command is one line: " + line);
        }
        if (stdin == null) {
            throw new IllegalStateException(name + " was started with its standard input closed");
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
     * Reads the next line of standard output that no earlier {@code readLine} returned.
     *
     * @param timeout how long to wait
     * @return the line
     * @throws org.opentest4j.AssertionFailedError if none comes in time, or the child's output ended
     */
    public String readLine(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (stdout) {
            while (true) {
                if (nextLine < stdout.lines.size()) {
                    return stdout.lines.get(nextLine++);
                }
                if (stdout.ended) {
                    return fail("the output of " + name + " ended while waiting for a line: " + describeAfterExit());
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return fail("no answer within " + timeout.toMillis() + " ms from " + describe());
                }
                stdout.await(remaining, this);
            }
        }
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
     * Waits for a line of standard output that matches, looking at every line since the start.
     *
     * @param match   what to look for
     * @param timeout how long to wait (zero: only the lines already read)
     * @return the first matching line
     * @throws org.opentest4j.AssertionFailedError if none comes in time, or the child's output ended without one
     */
    public String awaitLine(Predicate<String> match, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (stdout) {
            while (true) {
                for (String l : stdout.lines) {
                    if (match.test(l)) {
                        return l;
                    }
                }
                if (stdout.ended) {
                    return fail("the output of " + name + " ended without the line awaited: " + describeAfterExit());
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return fail("no line awaited within " + timeout.toMillis() + " ms from " + describe());
                }
                stdout.await(remaining, this);
            }
        }
    }

    /**
     * Waits for the child to exit and its output to be read. One that does not exit in time is killed, with everything
     * it started, and the test fails saying so.
     *
     * @param timeout how long to wait
     * @return its exit status (128 + the signal for a child a signal ended: 137 after SIGKILL)
     */
    public int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                killTree();
                return fail(name + " did not exit within " + timeout.toMillis() + " ms and was killed (SIGKILL): "
                        + describe());
            }
            outPump.join(PUMP_JOIN);
            errPump.join(PUMP_JOIN);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted while waiting for " + describe());
        }
        return process.exitValue();
    }

    /** Sends SIGKILL to the child (not to what it started) now, without waiting; {@link #awaitExit} reaps it. */
    public void kill() {
        process.destroyForcibly();
    }

    /** @return the child's state and output, for failure messages */
    public String describe() {
        String state = process.isAlive() ? "running" : "exited with status " + process.exitValue();
        return name + " (pid " + process.pid() + ", " + state + ")\n  stdout:\n" + stdout.last(DESCRIBED_LINES)
                + "\n  stderr:\n" + stderr.last(DESCRIBED_LINES);
    }

    /** As {@link #describe()}, once the child had a moment to exit: its output ended, its status is on its way. */
    private String describeAfterExit() {
        try {
            process.waitFor(2, TimeUnit.SECONDS);
            errPump.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return describe();
    }

    /**
     * Closes the child's standard input, waits for it up to its exit grace ({@link Builder#keepStdinOpen}), then kills
     * it and everything it started (SIGKILL), and reaps it. Never throws; closing twice does nothing.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        boolean interrupted = Thread.interrupted();
        try {
            if (stdin != null) {
                closeQuietly(stdin);
                if (!exitGrace.isZero() && !process.waitFor(exitGrace.toNanos(), TimeUnit.NANOSECONDS)) {
                    System.err.println("[" + name + "] did not exit " + exitGrace.toMillis()
                            + " ms after its stdin closed; killing it");
                }
            }
            killTree();
            outPump.join(2_000);
            errPump.join(2_000);
        } catch (InterruptedException e) {
            interrupted = true;
            process.destroyForcibly();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** SIGKILL to the child and its descendants, then waits (at most {@link #REAP_TIMEOUT} in all) for them to go. */
    private void killTree() {
        List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
        all.add(process.toHandle());
        all.forEach(ProcessHandle::destroyForcibly);
        long deadline = System.nanoTime() + REAP_TIMEOUT.toNanos();
        for (ProcessHandle h : all) {
            try {
                h.onExit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                // reported by the tests that care (a process that survives SIGKILL is still listed)
            }
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // the process is gone already
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }

    @Override
    public String toString() {
        return "ChildProcess{" + name + ", pid " + process.pid() + "}";
    }

    /** One output stream of the child: its lines so far, and whether it ended. Guarded by itself. */
    private static final class Output {
        private final List<String> lines = new ArrayList<>();
        private boolean ended;

        void pump(InputStream in, String echoPrefix) {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    if (echoPrefix != null) {
                        System.err.println(echoPrefix + line);
                    }
                    synchronized (this) {
                        lines.add(line);
                        notifyAll();
                    }
                }
            } catch (IOException e) {
                // the process is gone
            } finally {
                synchronized (this) {
                    ended = true;
                    notifyAll();
                }
            }
        }

        synchronized List<String> lines() {
            return List.copyOf(lines);
        }

        synchronized String text() {
            StringBuilder b = new StringBuilder();
            for (String l : lines) {
                b.append(l).append('\n');
            }
            return b.toString();
        }

        synchronized String last(int n) {
            if (lines.isEmpty()) {
                return "    (none)";
            }
            int from = Math.max(0, lines.size() - n);
            String shown = "    " + String.join("\n    ", lines.subList(from, lines.size()));
            return from == 0 ? shown : "    (" + from + " earlier lines left out)\n" + shown;
        }

        /** Waits (holding this monitor) up to {@code nanos} for a line or the end. */
        void await(long nanos, ChildProcess child) {
            try {
                wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted while waiting for " + child.describe());
            }
        }
    }
}
