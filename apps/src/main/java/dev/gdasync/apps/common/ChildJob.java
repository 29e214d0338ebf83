package dev.gdasync.apps.common;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A program run as a child job of one gdasync rank (MPJ Express's starter, Open MPI's {@code mpirun}): the child's
 * lines that start with the result tag are collected; one with the error tag fails the run; the rest go to the
 * {@link Echo}. The caller's heartbeat runs every half second meanwhile, so the other gdasync ranks can stay idle and
 * wait for the job's end without timing out, and the child's ranks have the CPUs. The job has ended when the child and
 * every process it started (seen while it ran) have exited; the child is killed if this JVM exits first.
 *
 * <p>Set it up, then {@link #run} it once:
 * <pre>{@code
 * List<String> rows = new ChildJob("the Open MPI baseline", command, "RESULT", "ERROR")
 *         .environment(env).echo(ChildJob.Echo.prefixed("ompi: ")).run(heartbeat);
 * }</pre>
 */
public final class ChildJob {
    /** How often the heartbeat runs while the child does. */
    static final long HEARTBEAT_MILLIS = 500;
    /** How long the child's own children may take to exit after it. */
    private static final long EXIT_MILLIS = 10_000;
    /** How long the output readers may take to finish after the child exited. */
    private static final long READER_MILLIS = 5_000;

    /** Where the child's lines that are neither results nor errors go. */
    @FunctionalInterface
    public interface Echo {
        /**
         * @param line   a line the child printed, without its line end
         * @param stderr whether it came on the child's standard error
         */
        void line(String line, boolean stderr);

        /**
         * @param prefix put before every echoed line ({@code "mpj: "})
         * @return an echo of the non-blank lines to this process's standard output and error, as they came
         */
        static Echo prefixed(String prefix) {
            return (line, stderr) -> {
                if (!line.isBlank()) {
                    (stderr ? System.err : System.out).println(prefix + line);
                }
            };
        }
    }

    private final String name;
    private final List<String> command;
    private final String resultTag;
    private final String errorTag;
    private Map<String, String> environment = Map.of();
    private Echo echo = Echo.prefixed("");
    private Consumer<String> onResult = line -> {
    };

    /**
     * @param name      the job in words, for the error messages ("the MPJ Express baseline")
     * @param command   the program and its arguments
     * @param resultTag the first word of result lines
     * @param errorTag  the first word of error lines
     */
    public ChildJob(String name, List<String> command, String resultTag, String errorTag) {
        this.name = Objects.requireNonNull(name, "name");
        this.command = List.copyOf(command);
        this.resultTag = Objects.requireNonNull(resultTag, "resultTag");
        this.errorTag = Objects.requireNonNull(errorTag, "errorTag");
    }

    /**
     * @param variables variables the child gets on top of this process's
     * @return this job
     */
    public ChildJob environment(Map<String, String> variables) {
        this.environment = Map.copyOf(variables);
        return this;
    }

    /**
     * @param to where the child's other lines go (default: {@code Echo.prefixed("")})
     * @return this job
     */
    public ChildJob echo(Echo to) {
        this.echo = Objects.requireNonNull(to, "echo");
        return this;
    }

    /**
     * @param listener told of every result line (without its tag) as it arrives, on a reader thread
     * @return this job
     */
    public ChildJob onResult(Consumer<String> listener) {
        this.onResult = Objects.requireNonNull(listener, "onResult");
        return this;
    }

    /** @return the program and its arguments */
    public List<String> command() {
        return command;
    }

    /** @return the variables the child gets on top of this process's */
    public Map<String, String> environment() {
        return environment;
    }

    /**
     * Runs the child job to its end; calls {@code heartbeat} every half second meanwhile.
     *
     * @param heartbeat called while the child runs
     * @return the result lines without their tag, in order
     * @throws IllegalStateException if the child reported an error or exited with a failure
     * @throws IOException           if it cannot be started
     * @throws InterruptedException  if interrupted while waiting (the child is then killed)
     */
    public List<String> run(Runnable heartbeat) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().putAll(environment);
        Process child = pb.start();
        Thread reaper = new Thread(() -> kill(child));
        Runtime.getRuntime().addShutdownHook(reaper);
        List<String> results = Collections.synchronizedList(new ArrayList<>());
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        Thread out = Thread.ofPlatform().daemon().name("child-stdout")
                .start(() -> pump(child.getInputStream(), false, results, errors));
        Thread err = Thread.ofPlatform().daemon().name("child-stderr")
                .start(() -> pump(child.getErrorStream(), true, results, errors));
        try {
            Set<ProcessHandle> seen = new HashSet<>();
            try {
                while (!child.waitFor(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS)) {
                    child.descendants().forEach(seen::add);
                    heartbeat.run();
                }
            } finally {
                if (child.isAlive()) {
                    kill(child);
                }
            }
            awaitGone(seen, heartbeat);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(reaper);
            } catch (IllegalStateException e) {
                // The JVM is shutting down already: the hook kills what is left.
            }
        }
        out.join(READER_MILLIS);
        err.join(READER_MILLIS);
        if (!errors.isEmpty()) {
            throw new IllegalStateException(name + " failed: " + String.join("; ", errors));
        }
        if (child.exitValue() != 0) {
            throw new IllegalStateException(name + " exited with status " + child.exitValue()
                    + " (its output is above)");
        }
        return List.copyOf(results);
    }

    private static void kill(Process child) {
        child.descendants().forEach(ProcessHandle::destroyForcibly);
        child.destroyForcibly();
    }

    /**
     * Waits for the child's own children (a JVM the starter ran, mpirun's ranks), which can outlive it by a moment
     * while they exit: the next job's ranks must not share the CPUs with them. One still there after
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

    private void pump(InputStream stream, boolean stderr, List<String> results, List<String> errors) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(resultTag + " ")) {
                    String result = line.substring(resultTag.length() + 1);
                    results.add(result);
                    onResult.accept(result);
                } else if (line.startsWith(errorTag + " ")) {
                    errors.add(line.substring(errorTag.length() + 1));
                } else {
                    echo.line(line, stderr);
                }
            }
        } catch (IOException | RuntimeException e) {
            errors.add("reading the child's output failed: " + e);
        }
    }
}
