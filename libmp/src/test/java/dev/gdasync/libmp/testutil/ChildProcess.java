package dev.gdasync.libmp.testutil;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
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
 * A child process whose output is collected line by line. Every wait has a deadline and fails the test
 * with the child's output; {@link #close()} kills the child and everything it started, so a failed test
 * leaves no process behind.
 */
public final class ChildProcess implements AutoCloseable {
    /** JVM options that keep small child JVMs cheap to start on a 2-core machine. */
    public static final List<String> LIGHT_JVM = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m");

    private final String name;
    private final Process process;
    private final List<String> stdout = new ArrayList<>();
    private final List<String> stderr = new ArrayList<>();
    private final Thread outPump;
    private final Thread errPump;

    private ChildProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        this.outPump = Thread.ofPlatform().daemon().name(name + "-out").start(() -> pump(process.getInputStream(), stdout));
        this.errPump = Thread.ofPlatform().daemon().name(name + "-err").start(() -> pump(process.getErrorStream(), stderr));
    }

    /** @return this JVM's java binary */
    public static String java() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /**
     * @return a command line that runs {@code mainClass} of this test class path in a light JVM
     */
    public static List<String> javaCommand(Class<?> mainClass, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(java(), "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(LIGHT_JVM);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * Starts the launcher ({@code MpRun}, what {@code scripts/mprun} runs) with light rank JVMs and a 30 s bootstrap
     * timeout, in a clean environment.
     *
     * @param args the launcher's arguments ({@code -np N}, the main class and its arguments, ...)
     * @return the running launcher
     */
    public static ChildProcess mprun(String... args) {
        List<String> a = new java.util.ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt",
                "-XX:TieredStopAtLevel=1"));
        a.addAll(List.of(args));
        Map<String, String> env = new java.util.HashMap<>();
        env.put("GDASYNC_BOOTSTRAP_TIMEOUT_MS", "30000");
        env.put("CLASSPATH", null);
        return start("mprun", javaCommand(dev.gdasync.libmp.launch.MpRun.class, a), env);
    }

    /**
     * Starts a process.
     *
     * @param name    a name for messages
     * @param command the command line
     * @param env     variables to set (a null value removes the variable)
     */
    public static ChildProcess start(String name, List<String> command, Map<String, String> env) {
        ProcessBuilder pb = new ProcessBuilder(command);
        for (String k : List.copyOf(pb.environment().keySet())) {
            if (k.startsWith("GDASYNC_") || k.startsWith("SLURM_") || k.startsWith("OMPI_") || k.startsWith("PMIX_")) {
                pb.environment().remove(k); // the test decides what the child sees
            }
        }
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            return new ChildProcess(name, p);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + name + ": " + command, e);
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
        }
    }

    /** @return the process */
    public Process process() {
        return process;
    }

    /** @return the stdout lines so far */
    public List<String> stdout() {
        synchronized (stdout) {
            return List.copyOf(stdout);
        }
    }

    /** @return the stderr lines so far */
    public List<String> stderr() {
        synchronized (stderr) {
            return List.copyOf(stderr);
        }
    }

    /**
     * Waits for a stdout line that matches.
     *
     * @return the line
     */
    public String awaitLine(Predicate<String> match, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (stdout) {
            while (true) {
                for (String l : stdout) {
                    if (match.test(l)) {
                        return l;
                    }
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return fail("no matching line within " + timeout.toMillis() + " ms from " + describe());
                }
                try {
                    stdout.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return fail("interrupted");
                }
            }
        }
    }

    /**
     * Waits for the process to exit and its output to be read.
     *
     * @return its exit status
     */
    public int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                fail(name + " did not exit within " + timeout.toMillis() + " ms: " + describe());
            }
            outPump.join(5_000);
            errPump.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
        return process.exitValue();
    }

    /** @return the child's state and output, for failure messages */
    public String describe() {
        String state = process.isAlive() ? "running" : "exited with " + process.exitValue();
        return name + " (pid " + process.pid() + ", " + state + ")\n  stdout:\n    " + String.join("\n    ", stdout())
                + "\n  stderr:\n    " + String.join("\n    ", stderr());
    }

    /** Kills the process and its descendants (SIGKILL) and reaps it. */
    @Override
    public void close() {
        List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
        all.add(process.toHandle());
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : all) {
            try {
                h.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // reported by the tests that care
            }
        }
    }
}
