package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.JitActivity;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Warms loops up and times them, in lockstep on both ranks: a time-based warm-up of the first size (the JIT, the
 * caches, the stream threads settling on their CPUs), then for every size a shorter warm-up and {@code reps}
 * timed runs whose median is reported, with the distribution of every timed round trip ({@link RoundTrips}) and the
 * spread of the runs. Rank 0 decides when a warm-up ends.
 *
 * <p>Several modes are measured side by side: each timed run of a size goes to every mode in turn, so that the
 * noise of a shared machine (another tenant, a CPU slowed for seconds) falls on all of them alike, and the
 * ratios between modes compare runs taken moments apart rather than minutes.
 */
final class Measurement {
    /** Round trips per warm-up run at most: a run is short, so a warm-up ends close to its time. */
    static final int WARMUP_CHUNK = 20_000;

    /** A mode's loop and its label. */
    record Mode(String label, Loop loop) {
    }

    private Measurement() {
    }

    /**
     * Measures modes side by side: per size, a warm-up of each, then run {@code r} of every mode before run
     * {@code r + 1} of any.
     *
     * @param pair    the ranks
     * @param modes   the modes, in the order each round runs them
     * @param options sizes, iterations, repetitions, warm-up
     * @param onRow    told of every row as soon as it is measured (rank 0)
     * @param progress told of every step, for the progress lines
     * @return the rows, mode by mode, each mode's sizes in order (rank 0; rank 1 gets an empty list)
     */
    static List<Result> runSideBySide(Pair pair, List<Mode> modes, PingPongOptions options, Consumer<Result> onRow,
                                      MeasurementProgress progress) {
        return runSideBySide(pair, modes, options, Result::of, onRow, progress);
    }

    /** Makes a row from a mode's timed runs at one size. */
    interface RowMaker<R> {
        /**
         * @param mode     the mode's label
         * @param bytes    the size
         * @param iters    iterations per run
         * @param runNanos each run's time
         * @param trips    every timed iteration, nanoseconds
         * @return the row
         */
        R row(String mode, int bytes, int iters, long[] runNanos, Histogram trips);
    }

    /**
     * Measures modes side by side, as {@link #runSideBySide(Pair, List, PingPongOptions, Consumer, MeasurementProgress)},
     * with rows of another kind (the message rate's).
     *
     * @param pair     the ranks
     * @param modes    the modes, in the order each round runs them
     * @param options  sizes, iterations, repetitions, warm-up
     * @param rowMaker makes each row
     * @param onRow    told of every row as soon as it is measured (rank 0)
     * @param progress told of every step, for the progress lines
     * @param <R>      the rows' type
     * @return the rows, mode by mode, each mode's sizes in order (rank 0; rank 1 gets an empty list)
     */
    static <R> List<R> runSideBySide(Pair pair, List<Mode> modes, PingPongOptions options, RowMaker<R> rowMaker,
                                     Consumer<R> onRow, MeasurementProgress progress) {
        int iters = options.iters();
        int first = options.sizes().getFirst();
        // Warm-ups record their round trips too (the timed path, the same code), then forget them.
        RoundTrips warmTrips = new RoundTrips();
        for (int k = 0; k < modes.size(); k++) {
            progress.warming(k, 0, true);
            warm(pair, modes.get(k).loop, first, Math.min(iters, WARMUP_CHUNK), options.firstWarmupNanos(), progress, warmTrips);
        }
        if (options.firstWarmupNanos() > 0) {
            settle(pair, modes, first, Math.min(iters, WARMUP_CHUNK), options.warmupSeconds(), progress, warmTrips);
        }
        List<List<R>> byMode = new ArrayList<>();
        for (int k = 0; k < modes.size(); k++) {
            byMode.add(new ArrayList<>());
        }
        for (int i = 0; i < options.sizes().size(); i++) {
            int bytes = options.sizes().get(i);
            for (int k = 0; k < modes.size(); k++) {
                progress.warming(k, i, false);
                warm(pair, modes.get(k).loop, bytes, Math.min(iters, WARMUP_CHUNK), options.sizeWarmupNanos(), progress, warmTrips);
            }
            long[][] runs = new long[modes.size()][options.reps()];
            RoundTrips[] trips = new RoundTrips[modes.size()];
            for (int k = 0; k < modes.size(); k++) {
                trips[k] = new RoundTrips();
            }
            for (int r = 0; r < options.reps(); r++) {
                for (int k = 0; k < modes.size(); k++) {
                    progress.timing(k, i, r);
                    runs[k][r] = modes.get(k).loop.run(bytes, iters, trips[k]);
                    progress.ran(bytes, iters, runs[k][r]);
                }
            }
            if (pair.initiator) {
                for (int k = 0; k < modes.size(); k++) {
                    R row = rowMaker.row(modes.get(k).label, bytes, iters, runs[k], trips[k].histogram());
                    byMode.get(k).add(row);
                    onRow.accept(row);
                }
            }
        }
        List<R> rows = new ArrayList<>();
        byMode.forEach(rows::addAll);
        return rows;
    }

    /**
     * After the time-based warm-up, runs every mode in turn at the first size until both ranks' JIT compilers were
     * quiet ({@link JitActivity#settle}); rank 0's progress says how long it took.
     */
    private static void settle(Pair pair, List<Mode> modes, int bytes, int iters, double warmupSeconds,
                               MeasurementProgress progress, RoundTrips trips) {
        JitActivity.Ranks ranks = JitActivity.Ranks.of(pair::decide, pair::allAgree);
        progress.note(JitActivity.settle(ranks, () -> {
            for (Mode m : modes) {
                progress.ran(bytes, iters, m.loop.run(bytes, iters, trips));
                trips.reset();
            }
        }, warmupSeconds));
    }

    private static void warm(Pair pair, Loop loop, int bytes, int iters, long nanos, MeasurementProgress progress,
                             RoundTrips trips) {
        long start = System.nanoTime();
        while (pair.decide(System.nanoTime() - start < nanos)) {
            progress.ran(bytes, iters, loop.run(bytes, iters, trips));
            trips.reset();
        }
    }
}
