package dev.gdasync.libmp.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** One rank: its process, the threads that copy its output, and how to stop it and what it started. */
final class RankProcess {
    private final int rank;
    private final Process process;
    private final Thread stdoutPump;
    private final Thread stderrPump;

    private RankProcess(int rank, Process process, PrintStream out, PrintStream err) {
        this.rank = rank;
        this.process = process;
        this.stdoutPump = Thread.ofPlatform().name("mprun-rank" + rank + "-out")
                .start(new LinePump(process.getInputStream(), out, rank));
        this.stderrPump = Thread.ofPlatform().name("mprun-rank" + rank + "-err")
                .start(new LinePump(process.getErrorStream(), err, rank));
    }

    /**
     * Starts a rank. Rank 0 reads the launcher's standard input (as with mpirun); the others read an
     * empty one.
     *
     * @param rank    the rank
     * @param command the command line
     * @param env     variables to set in the rank's environment
     * @param unset   variables to remove from it
     */
    static RankProcess start(int rank, List<String> command, Map<String, String> env, List<String> unset,
                             PrintStream out, PrintStream err) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        unset.forEach(pb.environment()::remove);
        pb.environment().putAll(env);
        if (rank == 0) {
            pb.redirectInput(ProcessBuilder.Redirect.INHERIT);
        }
        Process p = pb.start();
        if (rank != 0) {
            p.getOutputStream().close();
        }
        return new RankProcess(rank, p, out, err);
    }

    int rank() {
        return rank;
    }

    Process process() {
        return process;
    }

    /**
     * Waits for the rank's output to be copied completely (after it exited).
     *
     * @param timeout at most this long
     */
    void drain(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        stdoutPump.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        stderrPump.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }

    /**
     * Stops every given rank and every process they started: SIGTERM (so their shutdown hooks clean
     * up), then SIGKILL for whatever still runs after {@code patience}, and waits until all are gone.
     *
     * @return the processes that survived even SIGKILL for 10 s (normally none)
     */
    static List<ProcessHandle> stop(List<RankProcess> ranks, Duration patience) throws InterruptedException {
        List<ProcessHandle> all = new ArrayList<>();
        for (RankProcess r : ranks) {
            ProcessHandle h = r.process.toHandle();
            h.descendants().forEach(all::add); // before the parent dies and they are re-parented
            all.add(h);
        }
        all.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + patience.toNanos();
        awaitAll(all, deadline);
        for (RankProcess r : ranks) {
            r.process.toHandle().descendants().forEach(all::add); // started while we waited
        }
        all.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        awaitAll(all, System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        return all.stream().filter(ProcessHandle::isAlive).toList();
    }

    private static void awaitAll(List<ProcessHandle> all, long deadline) throws InterruptedException {
        for (ProcessHandle h : all) {
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                return;
            }
            try {
                h.onExit().get(remaining, TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                return;
            }
        }
    }
}
