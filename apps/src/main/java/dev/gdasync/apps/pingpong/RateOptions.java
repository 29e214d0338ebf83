package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.pingpong.PingPongOptions.Mode;
import dev.gdasync.libmp.cli.CommandLines;

import java.nio.file.Path;
import java.util.List;

/**
 * The message rate's settings, read from its command line by {@link RateCommand}.
 *
 * @param modes         the models to measure, in order: host, sa, jucx, ucx, mpj
 * @param sizes         message sizes in bytes
 * @param window        messages per window: the sender posts them all, then waits for one acknowledgement
 * @param iters         windows per timed run
 * @param reps          timed runs per size; the median is reported
 * @param warmupSeconds warm-up of each mode's first size; every other size gets a third of it
 * @param csv           where to write the CSV, or null
 * @param plot          where to write the plot (PNG), or null
 * @param pin           whether sa's stream threads are pinned to distinct CPUs
 */
public record RateOptions(List<Mode> modes, List<Integer> sizes, int window, int iters, int reps, double warmupSeconds,
                          Path csv, Path plot, boolean pin) {
    /** The largest window: the receives of a few windows ahead must fit the queue pairs (1024 receives). */
    public static final int MAX_WINDOW = 256;
    /** The largest message. */
    public static final int MAX_BYTES = 4 << 20;

    /**
     * Reads a command line without printing: for the MPJ child's arguments and for tests.
     *
     * @param args the application's arguments
     * @return the options, or null if help or version was asked for
     * @throws IllegalArgumentException with the one-line message the benchmark prints for it
     */
    public static RateOptions parse(String... args) {
        RateCommand command = new RateCommand();
        return CommandLines.parseOrThrow(command.commandLine(), args) ? command.options() : null;
    }

    /** @return the largest message size */
    public int maxBytes() {
        return sizes.stream().mapToInt(Integer::intValue).max().orElse(8);
    }

    /**
     * @return the ping-pong's options with this measurement's sizes, windows as iterations, repetitions and warm-up:
     * what {@link Measurement} and its progress lines read
     */
    PingPongOptions measurement() {
        return new PingPongOptions(modes, sizes, iters, 0, false, null, null, reps, warmupSeconds, pin,
                PingPongOptions.KiExecutorChoice.HOST, PingPongOptions.Buffers.HOST);
    }

    /** @return the arguments that recreate the sizes, window, iterations, repetitions and warm-up (for the MPJ child) */
    List<String> measurementArgs() {
        return List.of("--sizes", String.join(",", sizes.stream().map(String::valueOf).toList()),
                "--window", String.valueOf(window), "--iters", String.valueOf(iters), "--reps", String.valueOf(reps),
                "--warmup", String.valueOf(warmupSeconds));
    }
}
