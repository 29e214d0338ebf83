package dev.gdasync.apps.pingpong;

import dev.gdasync.libmp.cli.CommandLines;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The ping-pong's settings, read from its command line by {@link PingPongCommand}.
 *
 * @param modes         the models to measure, in order: host, sa, ki, mpj, mpj-niodev, jucx, and the C peers floor, ompi,
 *                      ucx
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
 * @param nics          the NIC providers to measure side by side ({@code swnic}, {@code mlx5}); empty for the default
 *                      provider ({@code GDASYNC_NIC}, else {@code swnic})
 * @param jfr           the folder each rank records its flight recording into ({@code DIR/rank-N.jfr}), or null
 * @param stats         whether each rank prints its NICs' counters at the end
 */
public record PingPongOptions(List<Mode> modes, List<Integer> sizes, int iters, double computeMicros, boolean validate,
                              Path csv, Path plot, int reps, double warmupSeconds, boolean pin, KiExecutorChoice kiExecutor,
                              Buffers buffers, List<String> nics, Path jfr, boolean stats) {

    /**
     * The options without a recording or counters.
     *
     * @param modes         the models to measure
     * @param sizes         message sizes in bytes
     * @param iters         round trips per timed run
     * @param computeMicros length of the compute task between a receive and the reply
     * @param validate      whether messages carry a pattern the receiver checks
     * @param csv           where to write the CSV, or null
     * @param plot          where to write the plot, or null
     * @param reps          timed runs per size
     * @param warmupSeconds warm-up of each mode's first size
     * @param pin           whether the stream threads are pinned
     * @param kiExecutor    where ki runs its kernels
     * @param buffers       where the messages live
     * @param nics          the NIC providers to measure side by side, or empty for the default one
     */
    public PingPongOptions(List<Mode> modes, List<Integer> sizes, int iters, double computeMicros, boolean validate,
                           Path csv, Path plot, int reps, double warmupSeconds, boolean pin, KiExecutorChoice kiExecutor,
                           Buffers buffers, List<String> nics) {
        this(modes, sizes, iters, computeMicros, validate, csv, plot, reps, warmupSeconds, pin, kiExecutor, buffers, nics,
                null, false);
    }

    /**
     * The options with the default NIC provider.
     *
     * @param modes         the models to measure
     * @param sizes         message sizes in bytes
     * @param iters         round trips per timed run
     * @param computeMicros length of the compute task between a receive and the reply
     * @param validate      whether messages carry a pattern the receiver checks
     * @param csv           where to write the CSV, or null
     * @param plot          where to write the plot, or null
     * @param reps          timed runs per size
     * @param warmupSeconds warm-up of each mode's first size
     * @param pin           whether the stream threads are pinned
     * @param kiExecutor    where ki runs its kernels
     * @param buffers       where the messages live
     */
    public PingPongOptions(List<Mode> modes, List<Integer> sizes, int iters, double computeMicros, boolean validate,
                           Path csv, Path plot, int reps, double warmupSeconds, boolean pin, KiExecutorChoice kiExecutor,
                           Buffers buffers) {
        this(modes, sizes, iters, computeMicros, validate, csv, plot, reps, warmupSeconds, pin, kiExecutor, buffers, List.of());
    }

    /** Where the messages live, and so which streams carry {@code sa}. */
    public enum Buffers {
        /** Host shared memory; {@code sa} runs on host streams. */
        HOST,
        /**
         * GPU memory ({@code cuMemAlloc}) on device 0: a compute kernel produces and consumes each message;
         * {@code host} synchronizes the CUDA stream before the CPU sends, {@code sa} runs on a CUDA stream.
         */
        GPU
    }

    /** Where the {@code ki} mode runs its kernels. */
    public enum KiExecutorChoice {
        /** The GPU when CUDA and the built kernels are there, else the host KI executor. */
        AUTO,
        /** The host KI executor, even with a GPU. */
        HOST,
        /** The GPU, or a failure saying why not. */
        GPU
    }

    /** The models the ping-pong measures. */
    public enum Mode {
        /** The MPI model: the CPU posts, sends and waits ({@code irecv}/{@code isend}/{@code wait}). */
        HOST,
        /** Stream-asynchronous: a host stream rings the sends and waits for the receives. */
        SA,
        /** MPJ Express {@code Send}/{@code Recv} on its multicore device: the outside reference. */
        MPJ,
        /**
         * MPJ Express {@code Send}/{@code Recv} on its niodev: one JVM per rank, TCP over the loopback, started without
         * MPJ's daemons ({@link dev.gdasync.apps.common.NiodevStarter}).
         */
        MPJ_NIODEV,
        /** Kernel-initiated: a ping-pong kernel (GPU, or the host KI executor) rings and waits itself. */
        KI,
        /**
         * Raw JUCX tagged send and receive between two UCP workers, without libmp: the reference for the UCX
         * transport. UCX picks its transports; {@code UCX_TLS} from the environment restricts them.
         */
        JUCX,
        /**
         * The floor: a C flag hand-off between two spinning processes, no library on the path ({@link FloorPeer});
         * measured whenever a C peer is, so every mode's ratio to it is printed.
         */
        FLOOR,
        /** Open MPI in C: {@code MPI_Send}/{@code MPI_Recv} over its shared-memory transport ({@link OmpiPeer}). */
        OMPI,
        /** Raw UCX in C: {@code ucx_perftest -t tag_lat} over UCX's shared memory ({@link UcxPeer}). */
        UCX;

        /** @return the name used on the command line, in the table and in the CSV ({@code mpj-niodev}) */
        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /** @return whether the mode runs an MPJ Express program in JVMs of its own ({@link MpjMode}) */
        boolean isMpj() {
            return this == MPJ || this == MPJ_NIODEV;
        }
    }

    /** The largest message: two buffers of it live in shared memory per rank. */
    public static final int MAX_BYTES = 64 << 20;
    /** The longest compute task, in microseconds (one second). */
    public static final double MAX_COMPUTE_MICROS = 1_000_000;

    /**
     * Reads a command line without printing: for the MPJ child's arguments and for tests.
     *
     * @param args the application's arguments
     * @return the options, or null if help or version was asked for
     * @throws IllegalArgumentException with the one-line message the ping-pong prints for it
     */
    public static PingPongOptions parse(String... args) {
        PingPongCommand command = new PingPongCommand();
        return CommandLines.parseOrThrow(command.commandLine(), args) ? command.options() : null;
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
