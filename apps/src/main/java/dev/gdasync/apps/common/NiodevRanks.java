package dev.gdasync.apps.common;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The rank JVMs of one niodev job ({@link NiodevStarter}): started together, their lines passed on to this process's
 * standard output and error as they come (whole lines, unchanged: rank 0's result lines keep their tag), watched until
 * all have exited, and killed with their own children when closed or when this JVM shuts down.
 *
 * <p>A rank fails the job when it exits with a status other than 0, or when MPJ's {@code Wrapper} reports that the
 * program threw out of its main: the Wrapper catches that, prints it and lets the JVM exit with status 0.
 */
final class NiodevRanks implements AutoCloseable {
    /** What MPJ's Wrapper prints when the program's main threw (after "[host-Wrapper.java]: "). */
    static final String WRAPPER_CAUGHT = "-Wrapper.java]: Multi-threaded starter: exception";
    /** How often the watch looks at the ranks. */
    private static final long POLL_MILLIS = 100;
    /** How long the other ranks may keep running after one ended well. */
    static final long EXIT_GRACE_MILLIS = 30_000;
    /** How long the output readers may take to finish after the ranks exited. */
    private static final long READER_MILLIS = 2_000;

    /** A rank's clean exit: which, and when (System.nanoTime). */
    private record Exit(int rank, long nanos) {
    }

    private final List<Process> processes = new ArrayList<>();
    private final List<Thread> readers = new ArrayList<>();
    private final List<CompletableFuture<Void>> exits = new ArrayList<>();
    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final AtomicReference<Exit> firstExit = new AtomicReference<>();
    private final Thread reaper = new Thread(this::kill, "niodev-reaper");
    /** Who started this JVM (rank 0 of an app, a script): the ranks are not left running without it. */
    private final ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
    private final PrintStream out;
    private final PrintStream err;

    private NiodevRanks(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /**
     * Starts every rank.
     *
     * @param commands    rank K's command line at index K
     * @param environment variables the ranks get on top of this process's
     * @param out         where the ranks' standard output goes
     * @param err         where their standard error goes
     * @return the running ranks
     * @throws IOException if one cannot be started (those started are killed)
     */
    static NiodevRanks start(List<List<String>> commands, Map<String, String> environment, PrintStream out,
                             PrintStream err) throws IOException {
        NiodevRanks ranks = new NiodevRanks(out, err);
        Runtime.getRuntime().addShutdownHook(ranks.reaper);
        try {
            for (int r = 0; r < commands.size(); r++) {
                ranks.start(r, commands.get(r), environment);
            }
        } catch (IOException | RuntimeException e) {
            ranks.close();
            throw e;
        }
        return ranks;
    }

    private void start(int rank, List<String> command, Map<String, String> environment) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().putAll(environment);
        Process p = pb.start();
        processes.add(p);
        exits.add(p.onExit().thenRun(() -> exited(rank, p.exitValue())));
        readers.add(Thread.ofPlatform().daemon().name("niodev-rank" + rank + "-stdout")
                .start(() -> pump(rank, p.getInputStream(), out)));
        readers.add(Thread.ofPlatform().daemon().name("niodev-rank" + rank + "-stderr")
                .start(() -> pump(rank, p.getErrorStream(), err)));
    }

    private void exited(int rank, int status) {
        if (status == 0) {
            firstExit.compareAndSet(null, new Exit(rank, System.nanoTime()));
        } else {
            failures.add("niodev rank " + rank + " exited with status " + status
                    + (status > 128 ? " (killed by signal " + (status - 128) + ")" : ""));
        }
    }

    private void pump(int rank, InputStream stream, PrintStream to) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                to.println(line);
                if (line.contains(WRAPPER_CAUGHT)) {
                    failures.add("niodev rank " + rank + ": the program threw out of its main (MPJ's Wrapper caught"
                            + " it; its stack trace is above)");
                }
            }
        } catch (IOException e) {
            // The rank was killed while its output was read: its exit says why.
        }
    }

    /**
     * @return why the ranks cannot all meet: the first that failed or exited, or null while all run
     */
    String exitedBeforeMeeting() {
        String failed = failure();
        if (failed != null) {
            return failed;
        }
        for (int r = 0; r < processes.size(); r++) {
            if (!processes.get(r).isAlive()) {
                return "niodev rank " + r + " exited with status " + processes.get(r).exitValue()
                        + " before the ranks met";
            }
        }
        return null;
    }

    /** @return the first failure seen, or null */
    private String failure() {
        synchronized (failures) {
            return failures.isEmpty() ? null : failures.getFirst();
        }
    }

    /**
     * Watches the ranks until all have exited, one failed, the others outlived a clean exit by
     * {@value #EXIT_GRACE_MILLIS} ms, the process that started this one exited, or the job's time is up.
     *
     * @param timeoutMillis how long the job may run
     * @return why the job failed, or null if every rank exited with status 0
     * @throws InterruptedException if interrupted meanwhile
     */
    String awaitEnd(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        for (;;) {
            String failed = failure();
            if (failed != null) {
                return failed;
            }
            List<Integer> running = running();
            if (running.isEmpty()) {
                // The exit callbacks run on another thread: let them record the last exits first.
                try {
                    CompletableFuture.allOf(exits.toArray(new CompletableFuture<?>[0])).get(READER_MILLIS, TimeUnit.MILLISECONDS);
                } catch (ExecutionException | TimeoutException e) {
                    return "the niodev ranks' exits could not be read: " + e;
                }
                return failure();
            }
            long now = System.nanoTime();
            Exit first = firstExit.get();
            if (first != null && now - first.nanos() > TimeUnit.MILLISECONDS.toNanos(EXIT_GRACE_MILLIS)) {
                return "niodev " + ranks(running) + " still running " + EXIT_GRACE_MILLIS / 1000 + " s after rank "
                        + first.rank() + " ended";
            }
            if (parent != null && !parent.isAlive()) {
                return "the niodev starter's parent (pid " + parent.pid() + ") exited; " + ranks(running) + " killed";
            }
            if (now - deadline > 0) {
                return "the niodev job ran past its limit of " + timeoutMillis / 1000 + " s (" + ranks(running)
                        + " still running)";
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    private List<Integer> running() {
        List<Integer> out = new ArrayList<>();
        for (int r = 0; r < processes.size(); r++) {
            if (processes.get(r).isAlive()) {
                out.add(r);
            }
        }
        return out;
    }

    private static String ranks(List<Integer> ranks) {
        return (ranks.size() == 1 ? "rank " : "ranks ") + String.join(", ", ranks.stream().map(String::valueOf).toList());
    }

    private void kill() {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    /** Kills the ranks still running, waits for them, and lets their last lines through. */
    @Override
    public void close() {
        kill();
        try {
            for (Process p : processes) {
                p.waitFor(READER_MILLIS, TimeUnit.MILLISECONDS);
            }
            for (Thread t : readers) {
                t.join(READER_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException e) {
            // The JVM is shutting down already: the hook kills what is left.
        }
    }
}
