package dev.gdasync.apps.pingpong;

import java.util.List;
import java.util.Map;

/**
 * {@code msgrate --mode ucx}: raw UCX in C as the message rate's reference, UCX's own {@code ucx_perftest -t tag_bw}
 * (UCP tagged sends streamed one way from a client process to a server process, over {@code UCX_TLS=posix,self}), run
 * in the same minute as the Java modes, as {@code pingpong --mode ucx} runs {@code tag_lat} ({@link UcxPeer}: the
 * same program, port and CPUs). One run sends as many messages as a Java run: the window times the windows.
 *
 * <p>What it measures is not quite the Java modes' pattern: {@code tag_bw} has no acknowledgement per window (the
 * sender keeps sending while UCX completes earlier sends, and the receiver buffers what arrives before its receive
 * is posted), so it is the rate a sender reaches with nothing to wait for, an upper bound for the windowed modes.
 * It reports its overall rate only, so the row has no window percentiles.
 */
final class UcxRatePeer implements CPeer {
    private final UcxPeer ucx;
    private final int window;

    /**
     * @param ucx    the ping-pong's ucx peer (program, port, CPUs)
     * @param window messages per window of the Java modes: a run of {@code iters} windows sends {@code window * iters}
     */
    UcxRatePeer(UcxPeer ucx, int window) {
        this.ucx = ucx;
        this.window = window;
    }

    @Override
    public String label() {
        return ucx.label();
    }

    @Override
    public String describe() {
        return "ucx: ucx_perftest -t tag_bw (UCP tagged sends streamed one way in C, no acknowledgement per window)"
                + " over UCX_TLS=posix,self";
    }

    @Override
    public List<List<String>> commands(int bytes, int iters) {
        return ucx.bandwidthCommands(bytes, messages(iters));
    }

    /** The ping-pong's server port: the client starts once the server listens there. */
    @Override
    public int serverPort() {
        return ucx.port();
    }

    @Override
    public Map<String, String> environment() {
        return ucx.environment();
    }

    /** The run's time as the Java modes count it: its messages over the overall rate ucx_perftest reports. */
    @Override
    public CPeerRun parse(String output, int iters) {
        long messages = messages(iters);
        double rate = UcxPeer.parseBandwidth(output, (int) messages)[1];
        if (!(rate > 0)) {
            throw new IllegalArgumentException("ucx_perftest reported a message rate of " + rate + " for " + messages
                    + " messages");
        }
        return new CPeerRun(Math.round(messages / rate * 1e9), new long[0], Double.NaN);
    }

    private int messages(int iters) {
        long m = (long) window * iters;
        if (m > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(window + " x " + iters + " messages are more than one ucx_perftest run takes");
        }
        return (int) m;
    }
}
