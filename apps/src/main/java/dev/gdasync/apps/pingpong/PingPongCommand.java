package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.pingpong.PingPongOptions.Buffers;
import dev.gdasync.apps.pingpong.PingPongOptions.KiExecutorChoice;
import dev.gdasync.apps.pingpong.PingPongOptions.Mode;
import dev.gdasync.gdsync.nic.NicProviders;
import dev.gdasync.gdsync.trace.FlightRecording;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.OutputFile;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The ping-pong's command line as picocli reads it; {@link #options()} gives the {@link PingPongOptions}. Output
 * files are checked when the line is read, on every rank, before the ranks meet.
 */
@Command(name = "scripts/mprun -np 2 pingpong", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        sortOptions = false, usageHelpAutoWidth = false,
        description = {"LibMP's ping-pong between two ranks: the one-way latency of each model, side by side.",
                "Modes: host (the CPU calls irecv/isend/wait), sa (host streams ring the sends and wait for the receives),"
                        + " ki (a kernel rings and waits: on the GPU, or on the host KI executor without one), mpj (MPJ"
                        + " Express Send/Recv, multicore device), mpj-niodev (the same on MPJ's niodev: a JVM per rank, TCP"
                        + " over the loopback), jucx (raw JUCX tagged send/receive between two UCP"
                        + " workers; UCX_TLS=tcp forces TCP)."},
        optionListHeading = "%nOptions:%n",
        footer = {"", "One-way = round trip / 2: the median of the runs, and the percentiles of every round trip (HdrHistogram)."
                + " A target is reported NOT met only on a quiet run. Rank 0 prints the table; progress lines go to"
                + " standard error every few seconds (-Dgdasync.progress.seconds=S through --jvm-opt changes how often)."})
final class PingPongCommand implements CommandLines.Checked {
    @Option(names = "--mode", paramLabel = "M[,M...]", converter = ModesConverter.class,
            description = "models to measure, in order: host, sa, ki, mpj, mpj-niodev, jucx, and the C peers floor, ompi, ucx"
                    + " (the floor is added whenever ompi or ucx is asked for; default host,sa)")
    List<Mode> modes = List.of(Mode.HOST, Mode.SA);

    @Option(names = "--sizes", paramLabel = "S[,S...]", converter = SizesConverter.class,
            description = "message sizes in bytes, 1..67108864, K or M for KiB and MiB (default 8,4096,1048576)")
    List<Integer> sizes = List.of(8, 4096, 1 << 20);

    @Option(names = "--iters", paramLabel = "N", converter = ItersConverter.class,
            description = "round trips per timed run (default 10000)")
    int iters = 10_000;

    @Option(names = "--compute-us", paramLabel = "T", converter = ComputeConverter.class,
            description = "a busy compute task of T microseconds between each receive and the reply (on the stream in sa,"
                    + " in the kernel in ki, on the CPU otherwise; default 0)")
    double computeMicros;

    @Option(names = "--validate", description = "every message carries a pattern of (iteration, size) the receiver checks")
    boolean validate;

    @Option(names = "--csv", paramLabel = "FILE", converter = OutputFile.class,
            description = "write mode,bytes,iters,oneway_us,mbps rows, then the distribution (min_us,p50_us,p99_us,p99_9_us,"
                    + "max_us) and the runs' spread (run_min_us,run_max_us,spread_pct), to FILE (its folder must exist)")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE.png", converter = PlotFile.class,
            description = "draw one-way latency against size, one line per mode, into FILE.png (its folder must exist)")
    Path plot;

    @Option(names = "--reps", paramLabel = "R", converter = RepsConverter.class,
            description = "timed runs per size; the median is reported (default 5)")
    int reps = 5;

    @Option(names = "--warmup", paramLabel = "SECONDS", converter = WarmupConverter.class,
            description = "warm-up of each mode's first size; other sizes get a third of it (default 3)")
    double warmupSeconds = 3;

    @Option(names = "--pin", paramLabel = "yes|no", converter = YesNo.class,
            description = "pin the two sa stream threads (ki kernel threads) to distinct CPUs (default yes)")
    String pin = "yes";

    @Option(names = "--ki-executor", paramLabel = "auto|host|gpu", converter = KiExecutorConverter.class,
            description = "where ki runs its kernels: the GPU, the host KI executor, or auto (the GPU when there is one"
                    + " and the kernels were built; default auto)")
    KiExecutorChoice kiExecutor = KiExecutorChoice.AUTO;

    @Option(names = "--buffers", paramLabel = "host|gpu", converter = BuffersConverter.class,
            description = "where messages live: host shared memory, or GPU memory (a kernel of --compute-us produces and"
                    + " consumes each message; modes host and sa only; default host)")
    Buffers buffers = Buffers.HOST;

    @Option(names = "--nic", paramLabel = "P[,P...]", converter = NicsConverter.class,
            description = "NIC providers to measure side by side: swnic (the software NIC), mlx5 (mlx5 queues on a ConnectX"
                    + " NIC, or on the software mlx5 device where there is none); rows are labelled mode/provider when"
                    + " more than one is given (default: GDASYNC_NIC, else swnic)")
    List<String> nics = List.of();

    @Option(names = "--jfr", paramLabel = "DIR", converter = JfrFolder.class,
            description = "record gdasync's flight-recorder events into DIR/rank-N.jfr, one file per rank (DIR is made if its"
                    + " parent exists); scripts/trace DIR turns them into one timeline (docs/observability.md)")
    Path jfr;

    @Option(names = "--stats", description = "each rank prints its NIC's counters at the end: per NIC and per queue pair"
            + " (work requests, bytes, doorbells inline/agent, RNR retries, stream waits, errors), every mode and warm-up included")
    boolean stats;

    /** @return the command line with the project's settings */
    CommandLine commandLine() {
        return CommandLines.of(this);
    }

    @Override
    public void check() {
        // A list option given twice adds up (--mode host --mode sa): no mode or size twice.
        for (Mode m : modes) {
            if (modes.indexOf(m) != modes.lastIndexOf(m)) {
                throw new IllegalArgumentException("--mode: " + m.label() + " is given twice");
            }
        }
        for (Integer b : sizes) {
            if (sizes.indexOf(b) != sizes.lastIndexOf(b)) {
                throw new IllegalArgumentException("--sizes: " + b + " is given twice");
            }
        }
        for (String n : nics) {
            if (nics.indexOf(n) != nics.lastIndexOf(n)) {
                throw new IllegalArgumentException("--nic: " + n + " is given twice");
            }
        }
        if (buffers == Buffers.GPU && nics.size() > 1) {
            throw new IllegalArgumentException("--buffers gpu measures one NIC provider at a time, not " + String.join(",", nics));
        }
        if (buffers == Buffers.GPU) {
            for (Mode m : modes) {
                if (m != Mode.HOST && m != Mode.SA) {
                    throw new IllegalArgumentException("--buffers gpu runs the host and sa modes only, not " + m.label()
                            + " (ki, mpj, mpj-niodev, jucx and the C peers use host buffers)");
                }
            }
        }
    }

    /** @return the options read */
    PingPongOptions options() {
        List<Mode> modes = this.modes;
        if (!modes.contains(Mode.FLOOR) && modes.stream().anyMatch(CPeers::isCPeer)) {
            // Every C peer's figure is read against the floor measured in the same run.
            List<Mode> withFloor = new ArrayList<>(modes.size() + 1);
            withFloor.add(Mode.FLOOR);
            withFloor.addAll(modes);
            modes = List.copyOf(withFloor);
        }
        return new PingPongOptions(modes, sizes, iters, computeMicros, validate, csv, plot, reps, warmupSeconds, pin.equals("yes"),
                kiExecutor, buffers, nics, jfr, stats);
    }

    /** --nic: a comma-separated list of NIC providers. */
    static final class NicsConverter implements ITypeConverter<List<String>> {
        @Override
        public List<String> convert(String v) {
            List<String> out = new ArrayList<>();
            for (String s : v.split(",", -1)) {
                String n = s.strip().toLowerCase(Locale.ROOT);
                if (n.isEmpty()) {
                    throw new TypeConversionException("an empty provider in '" + v + "' (a comma-separated list of swnic, mlx5)");
                }
                try {
                    NicProviders.named(n);
                } catch (IllegalArgumentException e) {
                    throw new TypeConversionException(e.getMessage());
                }
                if (out.contains(n)) {
                    throw new TypeConversionException(n + " is given twice");
                }
                out.add(n);
            }
            return List.copyOf(out);
        }
    }

    /** --mode: a comma-separated list of distinct modes. */
    static final class ModesConverter implements ITypeConverter<List<Mode>> {
        @Override
        public List<Mode> convert(String v) {
            List<Mode> out = new ArrayList<>();
            for (String s : v.split(",", -1)) {
                String m = s.strip();
                if (m.isEmpty()) {
                    throw new TypeConversionException("an empty mode in '" + v + "' (a comma-separated list of host, sa, ki, mpj, mpj-niodev, jucx, floor, ompi, ucx)");
                }
                Mode mode = null;
                for (Mode candidate : Mode.values()) {
                    if (candidate.label().equals(m)) {
                        mode = candidate;
                    }
                }
                if (mode == null) {
                    throw new TypeConversionException("unknown mode '" + m + "' (host, sa, ki, mpj, mpj-niodev, jucx, floor, ompi or ucx)");
                }
                if (out.contains(mode)) {
                    throw new TypeConversionException(m + " is given twice");
                }
                out.add(mode);
            }
            return List.copyOf(out);
        }
    }

    /** --sizes: a comma-separated list of distinct byte counts, K and M suffixes allowed. */
    static final class SizesConverter implements ITypeConverter<List<Integer>> {
        @Override
        public List<Integer> convert(String v) {
            List<Integer> out = new ArrayList<>();
            for (String s : v.split(",", -1)) {
                String t = s.strip();
                if (t.isEmpty()) {
                    throw new TypeConversionException("an empty size in '" + v + "' (a comma-separated list of byte counts)");
                }
                long unit = 1;
                char last = Character.toUpperCase(t.charAt(t.length() - 1));
                if (last == 'K' || last == 'M') {
                    unit = last == 'K' ? 1024 : 1024 * 1024;
                    t = t.substring(0, t.length() - 1);
                }
                long n;
                try {
                    n = Long.parseLong(t) * unit;
                } catch (NumberFormatException e) {
                    throw new TypeConversionException("'" + s.strip() + "' is not a byte count (a positive integer, optionally with K or M)");
                }
                if (n < 1 || n > PingPongOptions.MAX_BYTES) {
                    throw new TypeConversionException(s.strip() + " is out of range: sizes are 1.." + PingPongOptions.MAX_BYTES + " bytes");
                }
                if (out.contains((int) n)) {
                    throw new TypeConversionException(n + " is given twice");
                }
                out.add((int) n);
            }
            return List.copyOf(out);
        }
    }

    /** --iters: 1 to 10^9. */
    static final class ItersConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String v) {
            return whole(v, 1_000_000_000);
        }
    }

    /** --reps: 1 to 1000. */
    static final class RepsConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String v) {
            return whole(v, 1000);
        }
    }

    /** --compute-us: 0 to one second. */
    static final class ComputeConverter implements ITypeConverter<Double> {
        @Override
        public Double convert(String v) {
            return number(v, PingPongOptions.MAX_COMPUTE_MICROS);
        }
    }

    /** --warmup: 0 to an hour. */
    static final class WarmupConverter implements ITypeConverter<Double> {
        @Override
        public Double convert(String v) {
            return number(v, 3600);
        }
    }

    /** yes or no (kept as text: picocli gives boolean options values of its own). */
    static final class YesNo implements ITypeConverter<String> {
        @Override
        public String convert(String v) {
            if (!v.equals("yes") && !v.equals("no")) {
                throw new TypeConversionException("'" + v + "' is not yes or no");
            }
            return v;
        }
    }

    /** --ki-executor. */
    static final class KiExecutorConverter implements ITypeConverter<KiExecutorChoice> {
        @Override
        public KiExecutorChoice convert(String v) {
            return switch (v) {
                case "auto" -> KiExecutorChoice.AUTO;
                case "host" -> KiExecutorChoice.HOST;
                case "gpu" -> KiExecutorChoice.GPU;
                default -> throw new TypeConversionException("'" + v + "' is not auto, host or gpu");
            };
        }
    }

    /** --buffers. */
    static final class BuffersConverter implements ITypeConverter<Buffers> {
        @Override
        public Buffers convert(String v) {
            return switch (v) {
                case "host" -> Buffers.HOST;
                case "gpu" -> Buffers.GPU;
                default -> throw new TypeConversionException("'" + v + "' is not host or gpu");
            };
        }
    }

    /** --jfr: a folder, or a new one whose parent exists. */
    static final class JfrFolder implements ITypeConverter<Path> {
        @Override
        public Path convert(String v) {
            try {
                return FlightRecording.checkFolder(Path.of(v));
            } catch (IllegalArgumentException e) { // InvalidPathException included
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** --plot: a writable file whose name ends with .png. */
    static final class PlotFile implements ITypeConverter<Path> {
        @Override
        public Path convert(String v) {
            if (!v.toLowerCase(Locale.ROOT).endsWith(".png")) {
                throw new TypeConversionException("the plot is a PNG: the file name must end with .png, not '" + v + "'");
            }
            return new OutputFile().convert(v);
        }
    }

    private static int whole(String v, int max) {
        long n;
        try {
            n = Long.parseLong(v.strip());
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + v + "' is not a whole number from 1 to " + max);
        }
        if (n < 1 || n > max) {
            throw new TypeConversionException(n + " is not from 1 to " + max);
        }
        return (int) n;
    }

    private static double number(String v, double max) {
        double d;
        try {
            d = Double.parseDouble(v.strip());
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + v + "' is not a number from 0 to " + (long) max);
        }
        if (!(d >= 0 && d <= max)) { // also rejects NaN
            throw new TypeConversionException(v.strip() + " is not from 0 to " + (long) max);
        }
        return d;
    }
}
