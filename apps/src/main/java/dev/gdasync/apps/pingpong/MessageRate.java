package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.LauncherRank;
import dev.gdasync.apps.common.MpjStarter;
import dev.gdasync.apps.pingpong.PingPongOptions.Mode;
import dev.gdasync.gdsync.concurrent.CpuShare;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.ucx.UcxLibrary;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.BootstrapException;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.CommandLines;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Consumer;

/**
 * {@code scripts/mprun -np 2 msgrate --mode host,sa,jucx,ucx,mpj --window 64}: the message rate between two ranks in the
 * style of OSU's {@code osu_mbw_mr} (one pair): per iteration rank 0 posts a window of non-blocking sends, waits for
 * them, then for one acknowledgement from rank 1. Messages per second and bandwidth per mode and size, the modes
 * measured side by side as in {@link PingPong} ({@link Measurement}), MPJ Express in a JVM of its own afterwards.
 *
 * <ul>
 * <li>{@code host} ({@link HostRateLoop}): {@code isend} the window, {@code waitAll}, {@code wait} the acknowledgement;</li>
 * <li>{@code sa} ({@link StreamRateLoop}): a host stream rings the window and waits for the acknowledgement, the CPU
 *     prepares windows ahead and reaps;</li>
 * <li>{@code jucx} ({@link JucxRateLoop}): raw JUCX tagged sends, the reference;</li>
 * <li>{@code ucx} ({@link UcxRatePeer}): UCX's {@code ucx_perftest -t tag_bw} in C, one way with no acknowledgements,
 *     run by rank 0 in the same minute as the others;</li>
 * <li>{@code mpj} ({@link MpjMessageRate}): MPJ Express {@code Isend}/{@code Waitall}.</li>
 * </ul>
 */
public final class MessageRate {
    private MessageRate() {
    }

    /**
     * @param args see {@link RateCommand}, or {@code --help}
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        boolean speaker = LauncherRank.speaksForJob();
        RateCommand command = new RateCommand();
        OptionalInt stop = CommandLines.parse(command.commandLine(), args, out, err, speaker);
        if (stop.isPresent()) {
            return stop.getAsInt();
        }
        RateOptions o = command.options();
        if (o.modes().contains(Mode.MPJ)) {
            try {
                MpjStarter.require(System.getenv(MpjStarter.MPJ_HOME), "the ping-pong");
            } catch (IllegalStateException e) {
                if (speaker) {
                    err.println("msgrate: " + e.getMessage());
                }
                return 1;
            }
        }
        if (o.modes().contains(Mode.JUCX)) {
            Optional<String> noUcx = UcxLibrary.unavailableReason();
            if (noUcx.isEmpty()) {
                noUcx = JucxPeer.contextFailure();
            }
            if (noUcx.isPresent()) {
                if (speaker) {
                    err.println("msgrate: --mode jucx: " + noUcx.get());
                }
                return 1;
            }
        }
        int rank = -1;
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
            rank = boot.rank();
            if (boot.size() != 2) {
                if (rank == 0) {
                    err.println("msgrate: runs with exactly 2 ranks (scripts/mprun -np 2 msgrate ...), not " + boot.size());
                }
                return 2;
            }
            measure(boot, o, out);
            return 0;
        } catch (BootstrapException | JucxPeer.Failure | UncheckedIOException e) {
            err.println("msgrate" + (rank >= 0 ? " (rank " + rank + ")" : "") + ": " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println("msgrate" + (rank >= 0 ? " (rank " + rank + ")" : "") + " failed: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    private static void measure(EnvBootstrap boot, RateOptions o, PrintStream out) throws Exception {
        // Windows of receives are posted ahead: the ping-pong's deep queues.
        MpConfig config = MpConfig.defaults().withQueuePairs(new QueuePairConfig(1024, 1024, 2048));
        Pair pair = new Pair(boot, Mp.init(boot, config), o.maxBytes());
        boolean speak = boot.rank() == 0;
        // Read while this job's ranks are registered: after pair.close() the share counts them no more.
        String share = CpuShare.describe();
        if (speak) {
            out.println("msgrate: modes " + String.join(",", o.modes().stream().map(Mode::label).toList()) + ", sizes "
                    + o.sizes() + ", window " + o.window() + ", " + o.iters() + " windows x " + o.reps() + " runs per size");
            out.println(PingPong.machine());
            out.println("nic: " + pair.mp.nic().name() + "; software NIC transport: " + Report.transport());
            out.println(share);
        }
        Consumer<RateResult> rowDone = r -> out.println(RateReport.progressLine(r));
        List<RateResult> rows = new ArrayList<>();
        List<Measurement.Mode> open = new ArrayList<>();
        List<Long> pids = PingPong.jobPids(boot);
        LoadSeen load = LoadSeen.UNKNOWN;
        try {
            for (Mode mode : o.modes()) {
                Loop loop = switch (mode) {
                    case HOST -> new HostRateLoop(pair, o.window());
                    case SA -> {
                        StreamRateLoop l = new StreamRateLoop(pair, o.window(), o.pin());
                        if (speak) {
                            out.println("sa: " + (l.pinnedCpu() >= 0 ? "stream threads pinned to distinct CPUs" : "stream threads not pinned"));
                        }
                        yield l;
                    }
                    case JUCX -> {
                        JucxPeer peer = JucxPeer.open(pair, o.maxBytes(), pair.mp.config().waitTimeout());
                        if (speak) {
                            out.println("jucx: " + JucxPeer.describe() + "; transports to rank " + pair.peer + ": " + peer.transports());
                        }
                        yield new JucxRateLoop(pair, peer, o.window());
                    }
                    case UCX -> CPeers.openRate(pair, o.pin(), o.window(), speak ? out : null).orElse(null);
                    case MPJ, MPJ_NIODEV, KI, FLOOR, OMPI -> null;
                };
                if (loop != null) {
                    open.add(new Measurement.Mode(mode.label(), loop));
                }
            }
            if (!open.isEmpty()) {
                PingPongOptions m = o.measurement();
                MeasurementProgress progress = speak ? MeasurementProgress.toStandardError(m, open.stream().map(Measurement.Mode::label).toList())
                        : MeasurementProgress.silent(m);
                LoadSample before = LoadSample.take(pids);
                rows.addAll(Measurement.runSideBySide(pair, open, m,
                        (mode, bytes, iters, runs, trips) -> RateResult.of(mode, bytes, o.window(), iters, runs, trips), rowDone,
                        progress));
                load = LoadSeen.between(before, LoadSample.take(pids));
            }
        } finally {
            for (Measurement.Mode m : open.reversed()) {
                m.loop().close();
            }
        }
        if (o.modes().contains(Mode.MPJ)) {
            rows.addAll(MpjMode.run(pair, MpjMessageRate.class.getName(), o.measurementArgs(), o.sizes().size(),
                    MpjMessageRate.RESULT, MpjMessageRate::parse, rowDone));
        }
        pair.close();
        if (speak) {
            RateReport.print(rows, o, PingPong.machine() + "\n" + share, load, out);
            if (o.csv() != null) {
                RateCsv.write(rows, o.csv());
                out.println("wrote " + o.csv());
            }
            if (o.plot() != null) {
                RatePlot.write(rows, o.plot());
                out.println("wrote " + o.plot());
            }
        }
    }
}
