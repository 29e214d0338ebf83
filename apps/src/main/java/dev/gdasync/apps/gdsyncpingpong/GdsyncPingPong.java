package dev.gdasync.apps.gdsyncpingpong;

import java.io.BufferedReader;
import java.io.IOException;
import java.util.Arrays;

/**
 * The gdsync ping-pong: two processes bounce a message through the software NIC's API, with the
 * doorbell rung by the CPU ({@code ring=cpu}) or by a host stream ({@code ring=stream}).
 *
 * <p>This process is the initiator (rank 0); it starts the responder (rank 1) as a child JVM and
 * exchanges endpoint descriptors with it over the child's standard input and output. For each ring mode
 * and size it runs a warm-up, then {@link PingPongPlan#repetitions()} timed runs; the one-way latency is
 * half the round trip, and the figure reported is the median over the runs. A single-thread memcpy of
 * the same sizes is measured in the same run as the bandwidth reference.
 */
public final class GdsyncPingPong {
    private GdsyncPingPong() {
    }

    /**
     * Runs the benchmark.
     *
     * @param args see {@link PingPongPlan#parse}
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--responder")) {
            Responder.run(PingPongPlan.parse(Arrays.copyOfRange(args, 1, args.length)));
            return;
        }
        PingPongPlan plan;
        try {
            plan = PingPongPlan.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("gdsync-pingpong: " + e.getMessage());
            System.err.println(PingPongPlan.USAGE);
            System.exit(2);
            return;
        }
        Initiator.run(plan);
    }

    /** Reads one line from a peer; fails clearly if the peer is gone. */
    static String readLine(BufferedReader in, String what) throws IOException {
        String line = in.readLine();
        if (line == null) {
            throw new IOException("the other process closed its output while we waited for " + what);
        }
        return line;
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        int n = c.length;
        return n % 2 == 1 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    }
}
