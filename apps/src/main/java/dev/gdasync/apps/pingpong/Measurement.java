package dev.gdasync.apps.pingpong;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Warms a loop up and times it, in lockstep on both ranks: a time-based warm-up of the first size
 * (the JIT, the caches, the stream threads settling on their CPUs), then for every size a shorter
 * warm-up and {@code reps} timed runs whose median is reported. Rank 0 decides when a warm-up ends.
 */
final class Measurement {
    /** Round trips per warm-up run at most: a run is short, so a warm-up ends close to its time. */
    static final int WARMUP_CHUNK = 20_000;

    private Measurement() {
    }

    /**
     * @param pair    the ranks
     * @param loop    the loop
     * @param mode    the mode's label
     * @param options sizes, iterations, repetitions, warm-up
     * @param onRow   told of every row as soon as it is measured (rank 0)
     * @return the rows (rank 0; rank 1 gets an empty list)
     */
    static List<Result> run(Pair pair, Loop loop, String mode, PingPongOptions options, Consumer<Result> onRow) {
        List<Result> rows = new ArrayList<>();
        int iters = options.iters();
        warm(pair, loop, options.sizes().getFirst(), Math.min(iters, WARMUP_CHUNK), options.firstWarmupNanos());
        for (int bytes : options.sizes()) {
            warm(pair, loop, bytes, Math.min(iters, WARMUP_CHUNK), options.sizeWarmupNanos());
            long[] runs = new long[options.reps()];
            for (int r = 0; r < runs.length; r++) {
                runs[r] = loop.run(bytes, iters);
            }
            if (pair.initiator) {
                Result row = Result.of(mode, bytes, iters, runs);
                rows.add(row);
                onRow.accept(row);
            }
        }
        return rows;
    }

    private static void warm(Pair pair, Loop loop, int bytes, int iters, long nanos) {
        long start = System.nanoTime();
        while (pair.decide(System.nanoTime() - start < nanos)) {
            loop.run(bytes, iters);
        }
    }
}
