package dev.gdasync.apps.pingpong;

import java.util.List;
import java.util.Map;

/**
 * A ping-pong written in C, run outside the JVM as the reference the Java modes are measured against: the floor
 * ({@link FloorPeer}), Open MPI ({@link OmpiPeer}) and UCX ({@link UcxPeer}). Each timed run of such a mode starts
 * the program once ({@link CPeerLoop}); it warms itself up, times its own round trips and prints them.
 */
interface CPeer {
    /**
     * Round trips each run of a C peer makes untimed before the timed ones: a fresh process has cold caches, a
     * cold branch predictor and unmapped pages, which the Java modes' warm-up runs have long left behind.
     *
     * @param iters the timed round trips
     * @return the untimed ones
     */
    static int warmupFor(int iters) {
        return Math.max(1000, Math.min(iters, 100_000));
    }

    /** @return the mode's label */
    String label();

    /** @return what runs, in words, for the header line */
    String describe();

    /**
     * @param bytes the message size
     * @param iters the timed round trips
     * @return the processes to start for one run, in order: the last one's output is parsed, and the run ends when it
     * ends (an earlier one is a server the last one connects to)
     */
    List<List<String>> commands(int bytes, int iters);

    /**
     * @return the loopback TCP port the first process of a run (a server) listens on before the last one may start,
     *         or -1 when the processes need no such wait
     */
    default int serverPort() {
        return -1;
    }

    /** @return environment variables the processes get on top of this one's */
    Map<String, String> environment();

    /**
     * Reads a run's output.
     *
     * @param output the last process's standard output
     * @param iters  the timed round trips asked for
     * @return what the run measured
     * @throws IllegalArgumentException when the output is not what the program prints
     */
    CPeerRun parse(String output, int iters);

    /**
     * What one run of a C peer measured.
     *
     * @param totalNanos     the timed round trips' time, first send to last reply
     * @param tripNanos      every timed round trip, or an empty array where the program reports only summaries
     * @param p50OneWayMicros the median one-way latency the program itself reports, or NaN where it prints every trip
     */
    record CPeerRun(long totalNanos, long[] tripNanos, double p50OneWayMicros) {
    }
}
