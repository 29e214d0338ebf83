package dev.gdasync.apps.pingpong;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Opens the C peers' modes ({@code floor}, {@code ompi}, {@code ucx}) on both ranks: rank 0 finds or builds the
 * program and tells rank 1 whether the mode runs; a mode whose program is missing (no gcc, no Open MPI, no
 * ucx_perftest) is skipped with the reason, the other modes run. The programs run on the CPUs the ranks' stream
 * threads are pinned to ({@link StreamLoop#cpuFor}), or unpinned where those are not pinned.
 */
final class CPeers {
    /** What to install where a peer is missing. */
    static final String INSTALL_HINT = "on Debian: apt-get install gcc openmpi-bin libopenmpi-dev ucx-utils"
            + " (scripts/mprun and scripts/test install them when run as root)";

    private CPeers() {
    }

    /** @return whether the mode is a C peer's */
    static boolean isCPeer(PingPongOptions.Mode m) {
        return m == PingPongOptions.Mode.FLOOR || m == PingPongOptions.Mode.OMPI || m == PingPongOptions.Mode.UCX;
    }

    /**
     * Opens a C peer's mode (a collective).
     *
     * @param mode floor, ompi or ucx
     * @param pair the ranks
     * @param pin  whether to pin the programs where the ranks' stream threads are pinned
     * @param out  rank 0's output for the description or the reason it is skipped; null on rank 1
     * @return the loop, or empty when the mode is skipped
     */
    static Optional<CPeerLoop> open(PingPongOptions.Mode mode, Pair pair, boolean pin, PrintStream out) {
        return open(mode, pair, pin, out, UnaryOperator.identity());
    }

    /**
     * Opens msgrate's {@code ucx} mode (a collective): {@code ucx_perftest -t tag_bw} as a {@link UcxRatePeer}, found,
     * pinned and skipped with its reason as {@link #open} does for the ping-pong's modes.
     *
     * @param pair   the ranks
     * @param pin    whether to pin the programs where the ranks' stream threads are pinned
     * @param window messages per window of the Java modes
     * @param out    rank 0's output for the description or the reason it is skipped; null on rank 1
     * @return the loop, or empty when ucx_perftest is missing
     */
    static Optional<CPeerLoop> openRate(Pair pair, boolean pin, int window, PrintStream out) {
        return open(PingPongOptions.Mode.UCX, pair, pin, out, p -> new UcxRatePeer((UcxPeer) p, window));
    }

    private static Optional<CPeerLoop> open(PingPongOptions.Mode mode, Pair pair, boolean pin, PrintStream out,
                                            UnaryOperator<CPeer> as) {
        int[] cpus = cpus(pair, pin);
        CPeer peer = null;
        String problem = null;
        if (pair.initiator) {
            try {
                peer = as.apply(find(mode, cpus));
            } catch (IllegalStateException e) {
                problem = e.getMessage();
            }
        }
        if (!pair.decide(peer != null)) {
            if (out != null) {
                out.println(mode.label() + ": skipped: " + problem + " (" + INSTALL_HINT + ")");
            }
            return Optional.empty();
        }
        if (out != null) {
            out.println(peer.describe() + (cpus[0] >= 0 ? "; pinned to CPUs " + cpus[0] + " and " + cpus[1] : "; not pinned"));
        }
        return Optional.of(new CPeerLoop(pair, mode.label(), peer));
    }

    /** @return the CPUs of rank 0 and rank 1 (a collective), both -1 unless both are pinned */
    static int[] cpus(Pair pair, boolean pin) {
        int mine = StreamLoop.cpuFor(pair, pin);
        List<byte[]> all = pair.bootstrap.allGather(String.valueOf(mine).getBytes(StandardCharsets.US_ASCII));
        int c0 = Integer.parseInt(new String(all.get(0), StandardCharsets.US_ASCII));
        int c1 = Integer.parseInt(new String(all.get(1), StandardCharsets.US_ASCII));
        return c0 >= 0 && c1 >= 0 && c0 != c1 ? new int[]{c0, c1} : new int[]{-1, -1};
    }

    /**
     * @return the peer, its program found or built
     * @throws IllegalStateException saying what is missing
     */
    private static CPeer find(PingPongOptions.Mode mode, int[] cpus) {
        return switch (mode) {
            case FLOOR -> new FloorPeer(built("floor", "gcc"), cpus);
            case OMPI -> {
                String mpirun = OpenMpi.mpirun().orElseThrow(
                        () -> new IllegalStateException("Open MPI's mpirun is not on PATH"));
                yield new OmpiPeer(built("ompi", "mpicc"), mpirun, cpus, OpenMpi.version(mpirun));
            }
            case UCX -> new UcxPeer(Executables.onPath("ucx_perftest").orElseThrow(
                    () -> new IllegalStateException("UCX's ucx_perftest is not on PATH")).toString(), cpus, freePort());
            default -> throw new IllegalArgumentException(mode.label() + " is not a C peer");
        };
    }

    /** @return the program built from {@code cpeers/NAME.c} with {@code compiler} (gcc and mpicc take the same flags) */
    private static String built(String name, String compiler) {
        CPeerBuild.Built b = CPeerBuild.build(name, compiler, CPeerBuild.FLAGS);
        return b.path().orElseThrow(() -> new IllegalStateException(b.problem())).toString();
    }

    /** @return a loopback TCP port free now (the ucx_perftest server listens there) */
    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port for ucx_perftest", e);
        }
    }

    /**
     * Gives the rows of C peers that report only summaries (ucx_perftest) the median they reported.
     *
     * @param rows  the measured rows
     * @param modes the modes that were measured
     * @param reps  the timed runs per size
     * @return the rows, those rows with their median
     */
    static List<Result> withReportedMedians(List<Result> rows, List<Measurement.Mode> modes, int reps) {
        return rows.stream().map(r -> {
            for (Measurement.Mode m : modes) {
                if (m.label().equals(r.mode()) && m.loop() instanceof CPeerLoop c && !r.latencies().isKnown()) {
                    double p50 = c.reportedMedian(r.bytes(), reps);
                    if (!Double.isNaN(p50)) {
                        return new Result(r.mode(), r.bytes(), r.iters(), r.oneWayMicros(),
                                Latencies.medianOnly((long) r.iters() * reps, p50), r.runs());
                    }
                }
            }
            return r;
        }).toList();
    }

    /**
     * When ucx ran: its bandwidth and message rate per size, {@code ucx_perftest -t tag_bw} (a collective), printed
     * on rank 0 after the side-by-side runs.
     *
     * @param modes the modes that were measured
     * @param o     sizes and iterations
     * @param out   rank 0's output; null on rank 1
     */
    static void ucxBandwidth(List<Measurement.Mode> modes, PingPongOptions o, PrintStream out) {
        for (Measurement.Mode m : modes) {
            if (m.loop() instanceof CPeerLoop c && c.label().equals(PingPongOptions.Mode.UCX.label())) {
                for (int bytes : o.sizes()) {
                    String line = c.ucxBandwidth(bytes, o.iters());
                    if (out != null) {
                        out.println(line);
                    }
                }
            }
        }
    }
}
