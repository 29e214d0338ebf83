package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.Medians;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A C peer's mode as a {@link Loop}: each run starts the C program on rank 0 for that run's round trips, waits for
 * it, records its round trips in the same {@link RoundTrips} as the Java modes, and returns its time. Rank 1 waits in
 * the bootstrap (a blocking socket read, no spinning) meanwhile, so the two CPUs belong to the C processes; both ranks
 * then learn whether the run succeeded ({@link Pair#decide}), and rank 1 fails too when it did not.
 *
 * <p>A program that outlives {@value #RUN_SECONDS} s is killed and the run fails (below the bootstrap's 60 s
 * collective timeout, so rank 1 hears of it as a failure rather than a timeout).
 */
final class CPeerLoop implements Loop {
    /** The longest one run may take. */
    static final long RUN_SECONDS = 45;
    /** How long a server process (ucx_perftest's) may take to listen. */
    private static final long LISTEN_SECONDS = 10;

    private final Pair pair;
    private final String label;
    /** The program; null on rank 1, which runs nothing. */
    private final CPeer peer;
    /** The medians the program reported, per size, in run order (only for programs that report summaries). */
    private final Map<Integer, List<Double>> reportedP50 = new HashMap<>();
    private String failure;

    /**
     * @param pair  the ranks
     * @param label the mode's label (floor, ompi, ucx)
     * @param peer  the program on rank 0; null on rank 1
     */
    CPeerLoop(Pair pair, String label, CPeer peer) {
        this.pair = pair;
        this.label = label;
        this.peer = peer;
    }

    /** @return the mode's label */
    String label() {
        return label;
    }

    @Override
    public long run(int bytes, int iters, RoundTrips trips) {
        pair.barrier(); // both ranks are here: rank 1 stops spinning before the C processes start
        long total = 0;
        if (pair.initiator) {
            failure = null;
            try {
                CPeer.CPeerRun run = runOnce(bytes, iters);
                for (long t : run.tripNanos()) {
                    trips.record(t);
                }
                if (!Double.isNaN(run.p50OneWayMicros())) {
                    reportedP50.computeIfAbsent(bytes, b -> new ArrayList<>()).add(run.p50OneWayMicros());
                }
                total = run.totalNanos();
            } catch (IOException | IllegalArgumentException | IllegalStateException e) {
                failure = label + " (" + bytes + " B): " + e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = label + ": interrupted";
            }
        }
        if (!pair.decide(failure == null)) {
            throw new IllegalStateException(failure != null ? failure : label + ": the C peer failed on rank 0");
        }
        return total;
    }

    /**
     * @param bytes a size
     * @param runs  how many of the last runs to take (the timed ones)
     * @return the median of the medians the program reported in its last {@code runs} runs at that size, or NaN
     */
    double reportedMedian(int bytes, int runs) {
        List<Double> all = reportedP50.getOrDefault(bytes, List.of());
        if (all.isEmpty()) {
            return Double.NaN;
        }
        List<Double> last = all.subList(Math.max(0, all.size() - runs), all.size());
        return Medians.of(last.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /**
     * ucx's bandwidth run at one size (a collective; rank 0 runs {@code ucx_perftest -t tag_bw}, rank 1 waits).
     *
     * @param bytes the message size
     * @param iters the messages
     * @return on rank 0 the line to print; on rank 1 null
     */
    String ucxBandwidth(int bytes, int iters) {
        pair.barrier();
        String line = null;
        failure = null;
        if (pair.initiator) {
            try {
                UcxPeer u = (UcxPeer) peer;
                double[] bw = UcxPeer.parseBandwidth(run(u.bandwidthCommands(bytes, iters)), iters);
                line = String.format(Locale.ROOT, "ucx tag_bw %9d B  %7d messages  %11.1f MB/s  %12.0f msg/s"
                        + "  (ucx_perftest -t tag_bw, overall)", bytes, iters, bw[0], bw[1]);
            } catch (IOException | IllegalArgumentException | IllegalStateException | ClassCastException e) {
                failure = "ucx tag_bw (" + bytes + " B): " + e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = "ucx tag_bw: interrupted";
            }
        }
        if (!pair.decide(failure == null)) {
            throw new IllegalStateException(failure != null ? failure : "ucx tag_bw failed on rank 0");
        }
        return line;
    }

    private CPeer.CPeerRun runOnce(int bytes, int iters) throws IOException, InterruptedException {
        return peer.parse(run(peer.commands(bytes, iters)), iters);
    }

    /** Runs the processes of one run; returns the last one's standard output. */
    private String run(List<List<String>> commands) throws IOException, InterruptedException {
        List<Process> started = new ArrayList<>();
        Path out = Files.createTempFile("gdasync-" + label + "-", ".out");
        Path err = Files.createTempFile("gdasync-" + label + "-", ".err");
        try {
            Process last = null;
            for (int i = 0; i < commands.size(); i++) {
                boolean isLast = i == commands.size() - 1;
                ProcessBuilder pb = new ProcessBuilder(commands.get(i));
                pb.environment().putAll(peer.environment());
                pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
                pb.redirectOutput(isLast ? ProcessBuilder.Redirect.to(out.toFile()) : ProcessBuilder.Redirect.DISCARD);
                pb.redirectError(ProcessBuilder.Redirect.appendTo(err.toFile()));
                Process p = pb.start();
                started.add(p);
                if (isLast) {
                    last = p;
                } else if (peer.serverPort() > 0) {
                    awaitListening(p, peer.serverPort());
                }
            }
            if (!last.waitFor(RUN_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("did not end within " + RUN_SECONDS + " s: " + tail(err));
            }
            if (last.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", commands.getLast()) + " failed (exit " + last.exitValue()
                        + "): " + tail(err));
            }
            for (Process p : started) {
                if (!p.waitFor(5, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("a helper process did not end after the run: " + tail(err));
                }
            }
            return Files.readString(out, StandardCharsets.UTF_8);
        } finally {
            for (Process p : started) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** Waits until a server listens on a loopback TCP port, seen in /proc/net/tcp (a test connection would be taken for a client). */
    private static void awaitListening(Process server, int port) throws IOException, InterruptedException {
        String hexPort = String.format(Locale.ROOT, ":%04X ", port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LISTEN_SECONDS);
        while (System.nanoTime() < deadline) {
            for (String line : Files.readAllLines(Path.of("/proc/net/tcp"))) {
                String[] f = line.strip().split("\\s+");
                if (f.length > 3 && (f[1] + " ").endsWith(hexPort) && f[3].equals("0A")) {
                    return;
                }
            }
            if (!server.isAlive()) {
                throw new IllegalStateException("the server process ended (exit " + server.exitValue() + ") before listening on port " + port);
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException("the server process did not listen on port " + port + " within " + LISTEN_SECONDS + " s");
    }

    private static String tail(Path err) throws IOException {
        String s = Files.readString(err, StandardCharsets.UTF_8).strip();
        return s.isEmpty() ? "(nothing on standard error)" : s.length() > 2000 ? "..." + s.substring(s.length() - 2000) : s;
    }
}
