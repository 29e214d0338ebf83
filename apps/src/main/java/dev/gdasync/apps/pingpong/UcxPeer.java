package dev.gdasync.apps.pingpong;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ucx}: raw UCX in C, UCX's own {@code ucx_perftest -t tag_lat} (UCP tagged send and receive, Debian's
 * {@code ucx-utils}): a server process and a client process on this host meet over a loopback TCP port and then
 * exchange every message over UCX's shared memory ({@code UCX_TLS=posix,self}), each pinned to the CPU of the same
 * rank of the Java modes. ucx_perftest prints summaries, not every round trip: the row gets its median (the
 * 50th percentile it reports) and its overall time, and no other percentile.
 */
final class UcxPeer implements CPeer {
    private final String perftest;
    private final int[] cpus;
    private final int port;

    /**
     * @param perftest the ucx_perftest program
     * @param cpus     the CPUs of rank 0 and rank 1, or -1s
     * @param port     the loopback TCP port the server listens on
     */
    UcxPeer(String perftest, int[] cpus, int port) {
        this.perftest = perftest;
        this.cpus = cpus.clone();
        this.port = port;
    }

    /** @return the loopback port the server listens on */
    int port() {
        return port;
    }

    @Override
    public int serverPort() {
        return port;
    }

    @Override
    public String label() {
        return "ucx";
    }

    @Override
    public String describe() {
        return "ucx: ucx_perftest -t tag_lat (UCP tagged send/receive in C) over UCX_TLS=posix,self";
    }

    @Override
    public List<List<String>> commands(int bytes, int iters) {
        String p = String.valueOf(port);
        List<String> server = cpus[1] >= 0 ? List.of(perftest, "-p", p, "-c", String.valueOf(cpus[1]))
                : List.of(perftest, "-p", p);
        List<String> client = new java.util.ArrayList<>(List.of(perftest, "127.0.0.1", "-p", p, "-t", "tag_lat",
                "-s", String.valueOf(bytes), "-n", String.valueOf(iters), "-w", String.valueOf(CPeer.warmupFor(iters)), "-v"));
        if (cpus[0] >= 0) {
            client.addAll(List.of("-c", String.valueOf(cpus[0])));
        }
        return List.of(server, client);
    }

    /**
     * The commands of one {@code tag_bw} run (UCP tagged sends streamed one way, UCX's bandwidth and message rate),
     * as {@link #commands} for {@code tag_lat}.
     *
     * @param bytes the message size
     * @param iters the messages
     * @return the server's command, then the client's
     */
    List<List<String>> bandwidthCommands(int bytes, int iters) {
        return commands(bytes, iters).stream().map(c -> c.stream().map(a -> a.equals("tag_lat") ? "tag_bw" : a).toList()).toList();
    }

    /**
     * Reads a {@code tag_bw} run's CSV line.
     *
     * @param output the client's standard output
     * @param iters  the messages asked for
     * @return the overall bandwidth in MB/s as ucx_perftest reports it, and the overall messages per second
     * @throws IllegalArgumentException when the output is not the CSV result
     */
    static double[] parseBandwidth(String output, int iters) {
        String[] lines = output.strip().split("\n");
        String last = lines[lines.length - 1].strip();
        String[] f = last.split(",");
        try {
            if (f.length < 8 || Long.parseLong(f[0]) != iters) {
                throw new NumberFormatException();
            }
            return new double[]{Double.parseDouble(f[5]), Double.parseDouble(f[7])};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("ucx_perftest's last line is not its tag_bw CSV result for " + iters
                    + " messages: '" + last + "'");
        }
    }

    @Override
    public Map<String, String> environment() {
        return Map.of("UCX_TLS", "posix,self", "UCX_WARN_UNUSED_ENV_VARS", "n");
    }

    /**
     * Reads the CSV line of {@code -v}: iterations, 50th percentile, average and overall latency (one-way,
     * microseconds), then bandwidths and message rates.
     */
    @Override
    public CPeerRun parse(String output, int iters) {
        String[] lines = output.strip().split("\n");
        String last = lines[lines.length - 1].strip();
        String[] f = last.split(",");
        if (f.length < 4) {
            throw new IllegalArgumentException("ucx_perftest's last line is not its CSV result: '" + last + "'");
        }
        try {
            long n = Long.parseLong(f[0]);
            double p50 = Double.parseDouble(f[1]);
            double overall = Double.parseDouble(f[3]);
            if (n != iters || !(p50 > 0) || !(overall > 0)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "ucx_perftest reported %d iterations (asked %d), p50 %s, overall %s: '%s'", n, iters, f[1], f[3], last));
            }
            return new CPeerRun(Math.round(overall * 1000 * 2 * iters), new long[0], p50);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("ucx_perftest's last line is not its CSV result: '" + last + "'");
        }
    }
}
