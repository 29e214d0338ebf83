package dev.gdasync.apps.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A baseline run as a child job of one gdasync rank (MPJ Express's starter, Open MPI's {@code mpirun}): the child's
 * lines that start with the result tag are collected; one with the error tag fails the run; the rest are echoed with
 * a prefix. The caller's heartbeat runs every half second meanwhile, so the other gdasync ranks can stay idle and wait
 * for the job's end without timing out, and the child's ranks have the CPUs. The job has ended when the child and
 * every process it started (seen while it ran) have exited.
 */
public final class ChildJob {
    private static final long HEARTBEAT_MILLIS = 500;
    /** How long the child's own children may take to exit after it. */
    private static final long EXIT_MILLIS = 10_000;

    private ChildJob() {
    }

    /**
     * Runs the child job to its end; calls {@code heartbeat} every half second meanwhile.
     *
     * @param name        the baseline in words, for the error messages ("the MPJ Express baseline")
     * @param command     the program and its arguments
     * @param environment variables the child gets on top of this process's
     * @param echoPrefix  the prefix of the child's other lines when echoed ({@code "mpj: "})
     * @param resultTag   the prefix of result lines
     * @param errorTag    the prefix of error lines
     * @param heartbeat   called while the child runs
     * @return the result lines without their tag, in order
     * @throws IllegalStateException if the child reported an error or exited with a failure
     * @throws IOException           if it cannot be started
     * @throws InterruptedException  if interrupted while waiting (the child is then killed)
     */
    public static List<String> run(String name, List<String> command, Map<String, String> environment,
                                   String echoPrefix, String resultTag, String errorTag, Runnable heartbeat)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().putAll(environment);
        Process child = pb.start();
        List<String> results = Collections.synchronizedList(new ArrayList<>());
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        Thread out = Thread.ofPlatform().daemon().start(() -> pump(child, false, System.out, echoPrefix, resultTag,
                errorTag, results, errors));
        Thread err = Thread.ofPlatform().daemon().start(() -> pump(child, true, System.err, echoPrefix, resultTag,
                errorTag, results, errors));
        Set<ProcessHandle> seen = new HashSet<>();
        try {
            while (!child.waitFor(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS)) {
                child.descendants().forEach(seen::add);
                heartbeat.run();
            }
        } finally {
            if (child.isAlive()) {
                child.descendants().forEach(ProcessHandle::destroyForcibly);
                child.destroyForcibly();
            }
        }
        awaitGone(seen, heartbeat);
        out.join(5000);
        err.join(5000);
        if (!errors.isEmpty()) {
            throw new IllegalStateException(name + " failed: " + String.join("; ", errors));
        }
        if (child.exitValue() != 0) {
            throw new IllegalStateException(name + " exited with status " + child.exitValue());
        }
        return List.copyOf(results);
    }

    /**
     * Waits for the child's own children (a JVM the starter ran, mpirun's ranks), which can outlive it by a moment
     * while they exit: the next baseline's ranks must not share the CPUs with them. One still there after
     * {@value #EXIT_MILLIS} ms is killed.
     */
    private static void awaitGone(Set<ProcessHandle> seen, Runnable heartbeat) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EXIT_MILLIS);
        for (ProcessHandle p : seen) {
            while (p.isAlive() && System.nanoTime() < deadline) {
                try {
                    p.onExit().get(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    heartbeat.run();
                } catch (ExecutionException e) {
                    break;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
    }

    private static void pump(Process child, boolean stderr, PrintStream to, String echoPrefix, String resultTag,
                             String errorTag, List<String> results, List<String> errors) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                stderr ? child.getErrorStream() : child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(resultTag + " ")) {
                    results.add(line.substring(resultTag.length() + 1));
                } else if (line.startsWith(errorTag + " ")) {
                    errors.add(line.substring(errorTag.length() + 1));
                } else if (!line.isBlank()) {
                    to.println(echoPrefix + line);
                }
            }
        } catch (IOException | RuntimeException e) {
            errors.add("reading the child's output failed: " + e);
        }
    }
}
