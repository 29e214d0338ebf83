package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.LauncherRank;
import dev.gdasync.apps.common.MpjStarter;
import dev.gdasync.apps.common.NiodevStarter;
import dev.gdasync.gdsync.concurrent.CpuShare;
import dev.gdasync.gdsync.memop.WaitTally;
import dev.gdasync.gdsync.nic.NicProviders;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.trace.FlightRecording;
import dev.gdasync.gdsync.ucx.UcxLibrary;
import dev.gdasync.ki.KiException;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.BootstrapException;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.CommandLines;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Consumer;

/**
 * {@code scripts/mprun -np 2 pingpong --mode host,sa,mpj --sizes 8,4096,1048576 --iters 10000}: two ranks
 * bounce a message and report the one-way latency of each model (LibMP's ping-pong benchmarks).
 *
 * <ul>
 * <li>{@code host} ({@link HostLoop}): the MPI model, CPU-synchronous {@code irecv}/{@code isend}/{@code wait};</li>
 * <li>{@code sa} ({@link StreamLoop}): a host stream rings each send and waits for each receive, the CPU posts
 *     ahead and reaps;</li>
 * <li>{@code ki} ({@link KiLoop}): a ping-pong kernel rings each send and waits for each receive, on the GPU
 * or on the host KI executor; the CPU exports tables ahead and reaps;</li>
 * <li>{@code mpj} ({@link MpjMode}): MPJ Express {@code Send}/{@code Recv} on its multicore device, the outside
 *     reference; {@code mpj-niodev} the same on MPJ's niodev, a JVM per rank and TCP between them;</li>
 * <li>{@code jucx} ({@link JucxLoop}): raw JUCX tagged send and receive between two UCP workers, the reference
 *     for the UCX transport ({@code UCX_TLS} from the environment chooses its transports);</li>
 * <li>{@code floor}, {@code ompi}, {@code ucx} ({@link CPeers}): the C peers, programs outside the JVM run side by
 *     side with the others: the flag hand-off that is the floor of any shared-memory message, Open MPI's
 *     {@code MPI_Send}/{@code MPI_Recv} over its shared memory, and {@code ucx_perftest}'s tag latency; the report
 *     prints every mode's ratio to the floor and to Open MPI.</li>
 * </ul>
 * Rank 0 sends first, times, prints the table and the targets, and writes the CSV ({@link Csv}) and the
 * plot ({@link LatencyPlot}). One-way = round trip / 2, the median of {@code --reps} timed runs after a
 * time-based warm-up. The ranks meet through {@link EnvBootstrap} (set up by {@code scripts/mprun}).
 *
 * <p>{@code --jfr DIR} records each rank's gdasync events into {@code DIR/rank-N.jfr} ({@link FlightRecording});
 * {@code --stats} prints each rank's NIC counters at the end ({@link Stats}).
 */
public final class PingPong {
    private PingPong() {
    }

    /**
     * @param args see {@link PingPongCommand}, or {@code --help}
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the ping-pong as one rank.
     *
     * @param args the command line
     * @param out  where rank 0 prints the results
     * @param err  where errors go
     * @return the exit status: 0, 1 on a failure, 2 on a wrong command line
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        // Every rank got the same command line: before the bootstrap, only the launcher's variables say
        // which rank this is, and rank 0 alone speaks about it.
        boolean speaker = LauncherRank.speaksForJob();
        PingPongCommand command = new PingPongCommand();
        CommandLine cl = command.commandLine();
        OptionalInt stop = CommandLines.parse(cl, args, out, err, speaker);
        if (stop.isPresent()) {
            return stop.getAsInt();
        }
        PingPongOptions options = command.options();
        if (options.modes().stream().anyMatch(PingPongOptions.Mode::isMpj)) {
            try {
                MpjStarter.require(System.getenv(MpjStarter.MPJ_HOME), "the ping-pong");
                if (options.modes().contains(PingPongOptions.Mode.MPJ_NIODEV)) {
                    String missing = NiodevStarter.missing(System.getenv(MpjStarter.MPJ_HOME));
                    if (missing != null) {
                        throw new IllegalStateException("--mode mpj-niodev: " + missing);
                    }
                }
            } catch (IllegalStateException e) {
                if (speaker) {
                    err.println("pingpong: " + e.getMessage());
                }
                return 1;
            }
        }
        if (options.modes().contains(PingPongOptions.Mode.JUCX)) {
            Optional<String> noUcx = UcxLibrary.unavailableReason();
            if (noUcx.isEmpty()) {
                noUcx = JucxPeer.contextFailure();
            }
            if (noUcx.isPresent()) {
                if (speaker) {
                    err.println("pingpong: --mode jucx: " + noUcx.get());
                }
                return 1;
            }
        }
        if (options.modes().contains(PingPongOptions.Mode.KI) && options.kiExecutor() == PingPongOptions.KiExecutorChoice.GPU) {
            Optional<String> noGpu = KiExecutors.gpuUnavailable();
            if (noGpu.isPresent()) {
                if (speaker) {
                    err.println("pingpong: --ki-executor gpu: " + noGpu.get());
                }
                return 1;
            }
        }
        if (options.buffers() == PingPongOptions.Buffers.GPU) {
            Optional<String> noGpu = KiExecutors.gpuUnavailable();
            if (noGpu.isPresent()) {
                if (speaker) {
                    err.println("pingpong: --buffers gpu: " + noGpu.get());
                }
                return 1;
            }
        }
        int rank = -1;
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
            rank = boot.rank();
            if (boot.size() != 2) {
                if (rank == 0) {
                    err.println("pingpong: runs with exactly 2 ranks (scripts/mprun -np 2 pingpong ...), not " + boot.size());
                }
                return 2;
            }
            List<String> stats = new ArrayList<>();
            if (options.stats()) {
                WaitTally.timeWaits(true); // asked for: the clock reads of each stream wait are worth it
            }
            Measured measured;
            // Recorded from the bootstrap on: the NICs' opening and the warm-ups are in the file too.
            try (FlightRecording recording = options.jfr() == null ? null : FlightRecording.start(options.jfr(), rank)) {
                measured = measure(boot, options, out, stats);
                if (recording != null) {
                    recording.close();
                    out.println("rank " + rank + ": flight recording in " + recording.file());
                }
            }
            if (rank == 0) {
                report(measured, options, out);
            }
            for (String line : stats) {
                out.println(line);
            }
            return 0;
        } catch (BootstrapException e) {
            err.println("pingpong" + (rank >= 0 ? " (rank " + rank + ")" : "") + ": " + e.getMessage());
            return 1;
        } catch (Pattern.MismatchException e) {
            err.println("pingpong: " + e.getMessage());
            return 1;
        } catch (JucxPeer.Failure e) {
            // Names the rank, the request and the iteration: the message is the whole story.
            err.println("pingpong: " + e.getMessage());
            return 1;
        } catch (KiException e) {
            // A KI kernel's report names its descriptor: the message is the whole story.
            err.println("pingpong" + (rank >= 0 ? " (rank " + rank + ")" : "") + ": " + e.getMessage());
            return 1;
        } catch (UncheckedIOException e) {
            // Writing the CSV or the plot failed (the file was checked before the run; something changed since).
            err.println("pingpong: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println("pingpong" + (rank >= 0 ? " (rank " + rank + ")" : "") + " failed: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    /** The rows, and what else ran on the machine while the side-by-side modes were measured. */
    record Measured(List<Result> rows, LoadSeen load, String cpuShare) {
    }

    private static Measured measure(Bootstrap boot, PingPongOptions o, PrintStream out, List<String> stats)
            throws Exception {
        // Receives are posted far ahead in sa: deeper queues than LibMP's 512.
        MpConfig config = MpConfig.defaults().withQueuePairs(new QueuePairConfig(1024, 1024, 2048));
        List<Result> rows = new ArrayList<>();
        boolean speak = boot.rank() == 0;
        // One Mp per NIC provider, all over the one bootstrap; the first coordinates the measurement. Closed only
        // after a clean run: closing is a barrier, which a failed rank must not wait in while its peer is stuck in a
        // wait. A failed rank exits instead; its peer's NIC sees it gone and fails the peer's pending requests.
        List<String> nics = o.nics().isEmpty() ? List.of("") : o.nics();
        List<Pair> pairs = new ArrayList<>();
        for (String nic : nics) {
            MpConfig c = nic.isEmpty() ? config : config.withNic(NicProviders.named(nic).defaults());
            pairs.add(new Pair(boot, Mp.init(boot, c), o.maxBytes()));
        }
        Pair pair = pairs.getFirst();
        if (speak) {
            out.println("pingpong: modes " + String.join(",", o.modes().stream().map(PingPongOptions.Mode::label).toList())
                    + ", sizes " + o.sizes() + ", " + o.iters() + " round trips x " + o.reps() + " runs per size"
                    + (o.validate() ? ", validated" : "")
                    + (o.buffers() == PingPongOptions.Buffers.GPU ? ", gpu buffers" : "")
                    + (o.computeMicros() > 0 ? String.format(Locale.ROOT, ", %.1f us compute per receive", o.computeMicros()) : ""));
            out.println(machine());
            out.println("nic: " + String.join(", ", pairs.stream().map(p -> p.mp.nic().name()).toList()));
            out.println(CpuShare.describe());
        }
        Consumer<Result> rowDone = r -> out.println(Report.progressLine(r));
        GpuBuffers gpu = o.buffers() == PingPongOptions.Buffers.GPU ? new GpuBuffers(pair, o.maxBytes()) : null;
        // Every mode but mpj and mpj-niodev (JVMs of their own) is opened first and measured side by side (Measurement); modes that do
        // not use the NIC (jucx) once.
        List<Measurement.Mode> open = new ArrayList<>();
        List<Long> pids = jobPids(boot);
        LoadSeen load = LoadSeen.UNKNOWN;
        String cpuShare = CpuShare.describe();
        try {
            for (int k = 0; k < pairs.size(); k++) {
                for (PingPongOptions.Mode mode : o.modes()) {
                    boolean besideTheNic = mode == PingPongOptions.Mode.JUCX || CPeers.isCPeer(mode);
                    if (mode.isMpj() || (besideTheNic && k > 0)) {
                        continue;
                    }
                    if (CPeers.isCPeer(mode)) {
                        CPeers.open(mode, pairs.get(k), o.pin(), speak ? out : null)
                                .ifPresent(l -> open.add(new Measurement.Mode(mode.label(), l)));
                        continue;
                    }
                    String label = mode.label() + (pairs.size() > 1 && !besideTheNic ? "/" + nics.get(k) : "");
                    open.add(new Measurement.Mode(label, openLoop(mode, pairs.get(k), gpu, o, speak ? out : null)));
                }
            }
            if (!open.isEmpty()) {
                if (speak) {
                    out.printf(Locale.ROOT, "%s: warming up for %.1f s each, then %.1f s per size each; the timed runs"
                                    + " of a size go to each mode in turn%n",
                            String.join(", ", open.stream().map(Measurement.Mode::label).toList()),
                            o.warmupSeconds(), o.warmupSeconds() / 3);
                }
                MeasurementProgress progress = speak ? MeasurementProgress.toStandardError(o, open.stream().map(Measurement.Mode::label).toList())
                        : MeasurementProgress.silent(o);
                LoadSample before = LoadSample.take(pids);
                rows.addAll(CPeers.withReportedMedians(Measurement.runSideBySide(pair, open, o, rowDone, progress), open, o.reps()));
                CPeers.ucxBandwidth(open, o, speak ? out : null);
                load = LoadSeen.between(before, LoadSample.take(pids));
                cpuShare = CpuShare.describe();
            }
        } finally {
            for (Measurement.Mode m : open.reversed()) {
                m.loop().close();
            }
        }
        for (PingPongOptions.Mode mode : o.modes()) {
            if (mode.isMpj()) {
                rows.addAll(MpjMode.run(pair, o, mode, rowDone));
            }
        }
        if (gpu != null) {
            gpu.close();
        }
        if (o.stats()) {
            for (Pair p : pairs) {
                stats.addAll(Stats.lines(p.rank, p.mp.nic()));
            }
        }
        for (Pair p : pairs.reversed()) {
            p.close();
        }
        return new Measured(rows, load, cpuShare);
    }

    /** @return the process ids of the job's ranks (a collective): their CPU time is the job's own load */
    static List<Long> jobPids(Bootstrap boot) {
        byte[] mine = Long.toString(ProcessHandle.current().pid()).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        List<Long> pids = new ArrayList<>();
        for (byte[] b : boot.allGather(mine)) {
            pids.add(Long.parseLong(new String(b, java.nio.charset.StandardCharsets.US_ASCII)));
        }
        return pids;
    }

    /** Opens one mode's loop (with its buffers); {@code out} is rank 0's, null on rank 1. */
    private static Loop openLoop(PingPongOptions.Mode mode, Pair pair, GpuBuffers gpu, PingPongOptions o, PrintStream out)
            throws Exception {
        Messages messages = gpu != null ? new GpuMessages(pair, gpu, o, mode.label()) : new HostMessages(pair, o, mode.label());
        if (out != null && gpu != null) {
            out.println(mode.label() + ": " + messages.describe());
        }
        return switch (mode) {
            case HOST -> new HostLoop(pair, messages);
            case SA -> {
                StreamLoop loop = new StreamLoop(pair, messages, o);
                if (out != null) {
                    out.println("sa: " + (gpu != null ? "a CUDA stream rings the sends and waits for the receives"
                            : loop.pinnedCpu() >= 0 ? "stream threads pinned to distinct CPUs" : "stream threads not pinned"));
                }
                yield loop;
            }
            case KI -> new KiLoop(pair, o, KiExecutors.open(o.kiExecutor(), "pingpong-ki-rank" + pair.rank,
                    KiLoop.cpusFor(pair, o.pin()), pair.mp::progressStoreRings, out));
            case JUCX -> {
                JucxPeer peer = JucxPeer.open(pair, o.maxBytes(), pair.mp.config().waitTimeout());
                if (out != null) {
                    out.println("jucx: " + JucxPeer.describe() + "; transports to rank " + pair.peer + ": " + peer.transports());
                }
                yield new JucxLoop(pair, peer, o);
            }
            case MPJ, MPJ_NIODEV -> throw new IllegalArgumentException(mode.label() + " runs in JVMs of its own");
            case FLOOR, OMPI, UCX -> throw new IllegalArgumentException(mode.label() + " runs C programs (CPeers)");
        };
    }

    private static void report(Measured measured, PingPongOptions o, PrintStream out) {
        List<Result> rows = measured.rows();
        Report.print(rows, o, machine() + "\n" + measured.cpuShare() + " (at the end of the side-by-side runs)",
                measured.load(), out);
        if (o.csv() != null) {
            Csv.write(rows, o.csv());
            out.println("wrote " + o.csv());
        }
        if (o.plot() != null) {
            LatencyPlot.write(rows, o.plot());
            out.println("wrote " + o.plot());
        }
    }

    /** @return a line naming the machine: CPUs, model, OS, Java */
    static String machine() {
        String model = "";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    model = ", " + line.substring(line.indexOf(':') + 1).strip();
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: no model name
        }
        return "machine: " + Runtime.getRuntime().availableProcessors() + " CPUs" + model + ", "
                + System.getProperty("os.name") + " " + System.getProperty("os.version") + ", Java "
                + System.getProperty("java.version");
    }
}
