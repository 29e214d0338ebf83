package dev.gdasync.apps.pingpong;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The ping-pong's command line.
 *
 * @param modes         the models to measure, in order: host, sa, ki, mpj, jucx
 * @param sizes         message sizes in bytes, in the order given
 * @param iters         round trips per timed run
 * @param computeMicros length of the busy compute task between a receive and the reply (0: none)
 * @param validate      whether every message carries a pattern the receiver checks
 * @param csv           where to write the CSV, or null
 * @param plot          where to write the latency plot (PNG), or null
 * @param reps          timed runs per size; the median is reported
 * @param warmupSeconds warm-up of each mode's first size before anything is timed; every other size is
 *                      warmed for a third of it
 * @param pin           whether the two stream threads of {@code sa} are pinned to distinct CPUs
 * @param kiExecutor    where {@code ki} runs its kernels
 * @param buffers       where the messages live: host memory, or GPU memory with CUDA streams
 */
public record PingPongOptions(List<Mode> modes, List<Integer> sizes, int iters, double computeMicros, boolean validate,
                              Path csv, Path plot, int reps, double warmupSeconds, boolean pin, KiExecutorChoice kiExecutor,
                              Buffers buffers) {

    /** Where the messages live, and so which streams carry {@code sa}. */
    public enum Buffers {
        /** Host shared memory; {@code sa} runs on host streams. */
        HOST,
        /**
         * GPU memory ({@code cuMemAlloc}) on device 0: a compute kernel produces and consumes each message;
         * {@code host} synchronizes the CUDA stream before the CPU sends, {@code sa} runs on a CUDA stream.
         */
        GPU;

        static Buffers parse(String v) {
            return switch (v) {
                case "host" -> HOST;
                case "gpu" -> GPU;
                default -> throw new IllegalArgumentException("--buffers takes host or gpu, got '" + v + "'");
            };
        }
    }

    /** Where the {@code ki} mode runs its kernels. */
    public enum KiExecutorChoice {
        /** The GPU when CUDA and the built kernels are there, else the host KI executor. */
        AUTO,
        /** The host KI executor, even with a GPU. */
        HOST,
        /** The GPU, or a failure saying why not. */
        GPU;

        static KiExecutorChoice parse(String v) {
            return switch (v) {
                case "auto" -> AUTO;
                case "host" -> HOST;
                case "gpu" -> GPU;
                default -> throw new IllegalArgumentException("--ki-executor takes auto, host or gpu, got '" + v + "'");
            };
        }
    }

    /** The models the ping-pong measures. */
    public enum Mode {
        /** The MPI model: the CPU posts, sends and waits ({@code irecv}/{@code isend}/{@code wait}). */
        HOST,
        /** Stream-asynchronous: a host stream rings the sends and waits for the receives. */
        SA,
        /** MPJ Express {@code Send}/{@code Recv} on its multicore device: the outside reference. */
        MPJ,
        /** Kernel-initiated: a ping-pong kernel (GPU, or the host KI executor) rings and waits itself. */
        KI,
        /**
         * Raw JUCX tagged send and receive between two UCP workers, without libmp: the reference for the UCX
         * transport. UCX picks its transports; {@code UCX_TLS} from the environment restricts them.
         */
        JUCX;

        /** @return the name used on the command line, in the table and in the CSV */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.label().equals(s)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("--mode: unknown mode '" + s + "' (host, sa, ki, mpj or jucx)");
        }
    }

    /** The largest message: two buffers of it live in shared memory per rank. */
    public static final int MAX_BYTES = 64 << 20;
    /** The longest compute task, in microseconds (one second). */
    public static final double MAX_COMPUTE_MICROS = 1_000_000;

    static final String USAGE = """
            usage: scripts/mprun -np 2 pingpong [--mode M[,M...]] [--sizes S[,S...]] [--iters N] [--compute-us T]
                                                [--validate] [--csv FILE] [--plot FILE.png] [--reps R] [--warmup SECONDS] [--pin yes|no]
                                                [--ki-executor auto|host|gpu] [--buffers host|gpu]
              --mode        host (CPU irecv/isend/wait), sa (host streams ring sends and wait), ki (a kernel
                            rings sends and waits: on the GPU, or on the host KI executor without one), mpj
                            (MPJ Express Send/Recv, multicore device), jucx (raw JUCX tagged send/recv between
                            two UCP workers: UCX picks the transports, UCX_TLS=tcp forces TCP); default host,sa
              --sizes       message sizes in bytes, 1..67108864, a K or M suffix for KiB and MiB; default 8,4096,1048576
              --iters       round trips per timed run; default 10000
              --compute-us  a busy compute task of T microseconds between each receive and the reply
                            (on the stream in sa, in the kernel in ki, on the CPU in host, mpj and jucx); default 0
              --validate    every message carries a pattern of (iteration, size) that the receiver checks
              --csv         write mode,bytes,iters,oneway_us,mbps rows to FILE (oneway_us: round trip / 2, median
                            of the runs; mbps: 10^6 bytes per second, bytes / oneway_us)
              --plot        draw one-way latency against size, one line per mode, into FILE.png
              --reps        timed runs per size, the median is reported; default 5
              --warmup      seconds of warm-up of each mode's first size (other sizes: a third of it); default 3
              --pin         pin the two sa stream threads (ki kernel threads) to distinct CPUs; default yes
              --ki-executor where ki runs its kernels: gpu (CUDA), host (the host KI executor) or auto (the GPU
                            when there is one and the kernels were built, else the host); default auto
              --buffers     where messages live: host (shared memory), or gpu (GPU memory; a kernel of
                            --compute-us on a CUDA stream produces and consumes each message; host mode then
                            synchronizes the stream before each send, sa rings and waits from the CUDA stream;
                            modes host and sa only); default host""";

    /**
     * Parses the command line.
     *
     * @param args the application's arguments
     * @return the options, or null if help was asked for
     * @throws IllegalArgumentException with a precise message on a bad argument
     */
    public static PingPongOptions parse(String... args) {
        List<Mode> modes = List.of(Mode.HOST, Mode.SA);
        List<Integer> sizes = List.of(8, 4096, 1 << 20);
        int iters = 10_000;
        double compute = 0;
        boolean validate = false;
        Path csv = null;
        Path plot = null;
        int reps = 5;
        double warmup = 3;
        boolean pin = true;
        KiExecutorChoice kiExecutor = KiExecutorChoice.AUTO;
        Buffers buffers = Buffers.HOST;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-h", "--help" -> {
                    return null;
                }
                case "--validate" -> {
                    validate = true;
                    continue;
                }
                default -> {
                    // an option with a value, below
                }
            }
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "': options start with --");
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--mode", "--modes" -> modes = parseModes(v);
                case "--sizes" -> sizes = parseSizes(v);
                case "--iters" -> iters = parseCount(a, v, 1_000_000_000);
                case "--compute-us" -> compute = parseNumber(a, v, MAX_COMPUTE_MICROS);
                case "--csv" -> csv = parsePath(a, v, null);
                case "--plot" -> plot = parsePath(a, v, ".png");
                case "--reps" -> reps = parseCount(a, v, 1000);
                case "--warmup" -> warmup = parseNumber(a, v, 3600);
                case "--pin" -> pin = switch (v) {
                    case "yes" -> true;
                    case "no" -> false;
                    default -> throw new IllegalArgumentException("--pin takes yes or no, got '" + v + "'");
                };
                case "--ki-executor" -> kiExecutor = KiExecutorChoice.parse(v);
                case "--buffers" -> buffers = Buffers.parse(v);
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        if (buffers == Buffers.GPU) {
            for (Mode m : modes) {
                if (m != Mode.HOST && m != Mode.SA) {
                    throw new IllegalArgumentException("--buffers gpu runs the host and sa modes only, not " + m.label()
                            + " (ki, mpj and jucx use host buffers)");
                }
            }
        }
        return new PingPongOptions(modes, sizes, iters, compute, validate, csv, plot, reps, warmup, pin, kiExecutor, buffers);
    }

    private static List<Mode> parseModes(String v) {
        List<Mode> out = new ArrayList<>();
        for (String s : v.split(",", -1)) {
            String m = s.strip();
            if (m.isEmpty()) {
                throw new IllegalArgumentException("--mode: empty mode in '" + v + "' (a comma-separated list of host, sa, ki, mpj, jucx)");
            }
            Mode mode = Mode.parse(m);
            if (out.contains(mode)) {
                throw new IllegalArgumentException("--mode: " + m + " is given twice");
            }
            out.add(mode);
        }
        return List.copyOf(out);
    }

    private static List<Integer> parseSizes(String v) {
        List<Integer> out = new ArrayList<>();
        for (String s : v.split(",", -1)) {
            String t = s.strip();
            if (t.isEmpty()) {
                throw new IllegalArgumentException("--sizes: empty size in '" + v + "' (a comma-separated list of byte counts)");
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
                throw new IllegalArgumentException("--sizes: '" + s.strip() + "' is not a byte count (a positive integer, optionally with K or M)");
            }
            if (n < 1 || n > MAX_BYTES) {
                throw new IllegalArgumentException("--sizes: " + s.strip() + " is out of range: sizes are 1.." + MAX_BYTES + " bytes");
            }
            if (out.contains((int) n)) {
                throw new IllegalArgumentException("--sizes: " + n + " is given twice");
            }
            out.add((int) n);
        }
        return List.copyOf(out);
    }

    private static int parseCount(String name, String v, int max) {
        long n;
        try {
            n = Long.parseLong(v.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a positive integer, got '" + v + "'");
        }
        if (n < 1 || n > max) {
            throw new IllegalArgumentException(name + " must be in 1.." + max + ", got " + n);
        }
        return (int) n;
    }

    private static double parseNumber(String name, String v, double max) {
        double d;
        try {
            d = Double.parseDouble(v.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number, got '" + v + "'");
        }
        if (!(d >= 0 && d <= max)) { // also rejects NaN
            throw new IllegalArgumentException(name + " must be in 0.." + (long) max + ", got " + v);
        }
        return d;
    }

    private static Path parsePath(String name, String v, String suffix) {
        if (v.isBlank()) {
            throw new IllegalArgumentException(name + " needs a file name");
        }
        if (suffix != null && !v.toLowerCase(Locale.ROOT).endsWith(suffix)) {
            throw new IllegalArgumentException(name + " writes a PNG: the file name must end with " + suffix + ", got '" + v + "'");
        }
        try {
            return Path.of(v);
        } catch (java.nio.file.InvalidPathException e) {
            throw new IllegalArgumentException(name + ": '" + v + "' is not a valid path (" + e.getReason() + ")");
        }
    }

    /** @return the largest message size */
    public int maxBytes() {
        return sizes.stream().mapToInt(Integer::intValue).max().orElse(8);
    }

    /** @return the arguments that recreate the sizes, iterations, repetitions, warm-up, compute and validation */
    List<String> measurementArgs() {
        List<String> out = new ArrayList<>(List.of(
                "--sizes", String.join(",", sizes.stream().map(String::valueOf).toList()),
                "--iters", String.valueOf(iters),
                "--reps", String.valueOf(reps),
                "--warmup", String.valueOf(warmupSeconds),
                "--compute-us", String.valueOf(computeMicros)));
        if (validate) {
            out.add("--validate");
        }
        return out;
    }

    /** @return warm-up of a mode's first size, in nanoseconds */
    long firstWarmupNanos() {
        return (long) (warmupSeconds * 1e9);
    }

    /** @return warm-up of every other size, in nanoseconds */
    long sizeWarmupNanos() {
        return (long) (warmupSeconds * 1e9 / 3);
    }
}
