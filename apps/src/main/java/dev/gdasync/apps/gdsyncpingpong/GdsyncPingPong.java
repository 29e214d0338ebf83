package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.libmp.cli.CommandLines;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.util.OptionalInt;

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
     * Runs the benchmark and exits with its status.
     *
     * @param args see {@link PingPongPlan.Options}, or {@code --help}
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the benchmark, or the responder when {@code --responder} is given.
     *
     * @param args the command line
     * @param out  where help and version go
     * @param err  where mistakes go
     * @return the exit status: 0, or 2 for a wrong command line
     * @throws Exception on failure
     */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        PingPongPlan.Options o = new PingPongPlan.Options();
        OptionalInt stop = CommandLines.parse(CommandLines.of(o), args, out, err, true);
        if (stop.isPresent()) {
            return stop.getAsInt();
        }
        if (o.responder) {
            Responder.run(o.plan());
        } else {
            Initiator.run(o.plan());
        }
        return 0;
    }

    /** Reads one line from a peer; fails clearly if the peer is gone. */
    static String readLine(BufferedReader in, String what) throws IOException {
        String line = in.readLine();
        if (line == null) {
            throw new IOException("the other process closed its output while we waited for " + what);
        }
        return line;
    }
}
