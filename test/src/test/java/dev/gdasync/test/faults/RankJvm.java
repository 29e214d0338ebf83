package dev.gdasync.test.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * One rank of a job: a child JVM of this test class path started with the environment a launcher gives a rank
 * ({@code GDASYNC_RANK}, {@code GDASYNC_SIZE}, the rendezvous, the secret, the job id), whose output is collected
 * line by line.
 *
 * <p>Every wait has a deadline and fails the test with the rank's output. The rank's standard input stays open
 * while this object lives: the rank main exits when it ends, so a test JVM that dies takes its ranks with it.
 * {@link #close()} kills the rank (SIGKILL) and reaps it, so a failed run leaves no process behind.
 */
final class RankJvm implements AutoCloseable {
    /** Small child JVMs: cheap to start on a 2-CPU machine. */
    private static final List<String> LIGHT_JVM = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m",
            "-Xss1m");

    private final String name;
    private final Process process;
    private final OutputStream stdin;
    private final List<String> stdout = new ArrayList<>();
    private final List<String> stderr = new ArrayList<>();
    private final Thread outPump;
    private final Thread errPump;
    private final boolean unreaped;

    private RankJvm(String name, Process process, boolean unreaped) {
        this.name = name;
        this.process = process;
        this.unreaped = unreaped;
        this.stdin = process.getOutputStream();
        this.outPump = Thread.ofPlatform().daemon().name(name + "-out").start(() -> pump(process.getInputStream(), stdout));
        this.errPump = Thread.ofPlatform().daemon().name(name + "-err").start(() -> pump(process.getErrorStream(), stderr));
    }

    /**
     * Starts {@code mainClass} in a light JVM with this JVM's java binary and class path.
     *
     * @param name      a name for messages
     * @param mainClass the rank's main class
     * @param args      its arguments
     * @param env       variables the rank sees; every other {@code GDASYNC_*} variable of this JVM is removed
     * @return the running rank
     */
    static RankJvm start(String name, Class<?> mainClass, List<String> args, Map<String, String> env) {
        return start(name, javaCommand(mainClass, args), env, false);
    }

    /**
     * Starts {@code mainClass} as the child of a process that never reaps it ({@code sh} that backgrounds the JVM
     * and then becomes {@code sleep}): once the JVM dies it stays a zombie until that parent ends. The rank's
     * standard input and output are this object's as usual; {@link #rankProcess()} is the JVM itself, and
     * {@link #close()} ends the parent (the zombie goes to init then).
     *
     * @param name      a name for messages
     * @param mainClass the rank's main class
     * @param args      its arguments
     * @param env       variables the rank sees
     * @return the running rank
     */
    static RankJvm startUnreaped(String name, Class<?> mainClass, List<String> args, Map<String, String> env) {
        List<String> cmd = new ArrayList<>(List.of("sh", "-c",
                // fd 3 carries stdin past the shell's /dev/null for background jobs.
                "exec 3<&0; \"$@\" <&3 3<&- & exec sleep 600 3<&-", "sh"));
        cmd.addAll(javaCommand(mainClass, args));
        return start(name, cmd, env, true);
    }

    private static List<String> javaCommand(Class<?> mainClass, List<String> args) {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(LIGHT_JVM);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()));
        cmd.addAll(args);
        return cmd;
    }

    private static RankJvm start(String name, List<String> cmd, Map<String, String> env, boolean unreaped) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        for (String k : List.copyOf(pb.environment().keySet())) {
            if (k.startsWith("GDASYNC_") || k.startsWith("SLURM_") || k.startsWith("OMPI_") || k.startsWith("PMIX_")) {
                pb.environment().remove(k); // the test decides what the rank sees
            }
        }
        pb.environment().putAll(env);
        try {
            return new RankJvm(name, pb.start(), unreaped);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + name + ": " + cmd, e);
        }
    }

    private static void pump(InputStream in, List<String> into) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                synchronized (into) {
                    into.add(line);
                    into.notifyAll();
                }
            }
        } catch (IOException e) {
            // the process is gone
        } finally {
            synchronized (into) {
                into.notifyAll();
            }
        }
    }

    /** @return the rank's name */
    String name() {
        return name;
    }

    /** @return the rank's pid */
    long pid() {
        return process.pid();
    }

    /**
     * @return the rank's JVM: the process this object started, or for {@link #startUnreaped} that process's child
     */
    ProcessHandle rankProcess() {
        if (!unreaped) {
            return process.toHandle();
        }
        return process.toHandle().children().findFirst()
                .orElseThrow(() -> new IllegalStateException(name + " has no JVM under its parent " + process.pid()));
    }

    /**
     * Waits for a line of standard output that matches.
     *
     * @param match   what to look for
     * @param timeout how long to wait
     * @return the first matching line
     * @throws org.opentest4j.AssertionFailedError if none comes in time, or the rank's output ended without one
     */
    String awaitLine(Predicate<String> match, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (stdout) {
            while (true) {
                for (String l : stdout) {
                    if (match.test(l)) {
                        return l;
                    }
                }
                if (!outPump.isAlive()) {
                    return fail("the output of " + name + " ended without the line awaited: " + describe());
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return fail("no line awaited within " + timeout.toMillis() + " ms from " + describe());
                }
                try {
                    stdout.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return fail("interrupted while waiting for " + describe());
                }
            }
        }
    }

    /** Sends SIGKILL now, without waiting; {@link #awaitExit} reaps. */
    void kill() {
        process.destroyForcibly();
    }

    /**
     * Waits for the rank to exit and its output to be read.
     *
     * @param timeout how long to wait
     * @return its exit status
     */
    int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                fail(name + " did not exit within " + timeout.toMillis() + " ms: " + describe());
            }
            outPump.join(5_000);
            errPump.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted while waiting for " + describe());
        }
        return process.exitValue();
    }

    /** @return the rank's state and output, for failure messages */
    String describe() {
        String state = process.isAlive() ? "running" : "exited with " + process.exitValue();
        List<String> out;
        List<String> err;
        synchronized (stdout) {
            out = List.copyOf(stdout);
        }
        synchronized (stderr) {
            err = List.copyOf(stderr);
        }
        return name + " (pid " + process.pid() + ", " + state + ")\n  stdout:\n    " + String.join("\n    ", out)
                + "\n  stderr:\n    " + String.join("\n    ", err);
    }

    /** Kills the rank (SIGKILL) if it still runs, with anything it started, and reaps it. Never throws. */
    @Override
    public void close() {
        try {
            stdin.close();
        } catch (IOException e) {
            // gone already
        }
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "RankJvm{" + name + ", pid " + process.pid() + "}";
    }
}
