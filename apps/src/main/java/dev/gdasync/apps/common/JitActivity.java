package dev.gdasync.apps.common;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * How busy this JVM's JIT compilers were over a stretch of wall time, from the compile time the JVM accumulates
 * ({@link CompilationMXBean#getTotalCompilationTime()}).
 *
 * <p>Why benchmarks ask: a JVM goes on compiling for seconds after a fixed warm-up. On a machine with a CPU per rank
 * every compiler thread takes its CPU from a rank that spins, in slices of milliseconds, and the timed runs then
 * measure the JIT (measured on the 2-CPU guest: in a stream-triggered message-rate run after a 2 s warm-up the C2
 * compiler held 33-49 % of the CPUs through the timed runs, and the windows' p99 was 2-4 ms; after a 10 s warm-up
 * it was 0.3 ms). A warm-up therefore goes on until every rank's compilers were quiet over a stretch.
 */
public final class JitActivity {
    /** Quiet: the compilers used at most this share of one CPU over the stretch. */
    public static final double QUIET_SHARE = 0.02;
    /** The stretch over which the compilers must have been quiet on every rank. */
    public static final long STRETCH_NANOS = 500_000_000L;
    /** The longest wait for a quiet JIT after a time-based warm-up: four times the warm-up, at most this. */
    public static final double MAX_SETTLE_SECONDS = 20;
    /** Overrides the longest wait for a quiet JIT, in seconds (0: no wait). */
    public static final String MAX_SETTLE_PROPERTY = "gdasync.warmup.settle.seconds";

    /** How the ranks of a benchmark agree, outside its timed runs. */
    public interface Ranks {
        /**
         * @param mine this rank's answer; only rank 0's counts
         * @return rank 0's answer, on every rank
         */
        boolean rootSays(boolean mine);

        /**
         * @param mine this rank's answer
         * @return whether every rank answered yes, on every rank
         */
        boolean allSay(boolean mine);

        /**
         * @param rootSays rank 0's answer, on every rank
         * @param allSay   whether every rank answered yes, on every rank
         * @return the two as ranks
         */
        static Ranks of(Predicate<Boolean> rootSays, Predicate<Boolean> allSay) {
            return new Ranks() {
                @Override
                public boolean rootSays(boolean mine) {
                    return rootSays.test(mine);
                }

                @Override
                public boolean allSay(boolean mine) {
                    return allSay.test(mine);
                }
            };
        }
    }

    private final CompilationMXBean bean = ManagementFactory.getCompilationMXBean();
    private long markWallNanos;
    private long markCompileMillis;

    /** Starts a stretch now. */
    public JitActivity() {
        mark();
    }

    /** Starts a new stretch now. */
    public void mark() {
        markWallNanos = System.nanoTime();
        markCompileMillis = compileMillis();
    }

    /** @return the share of one CPU the compilers used since the stretch began (0 when the JVM cannot tell) */
    public double shareSinceMark() {
        long wall = System.nanoTime() - markWallNanos;
        if (wall <= 0) {
            return 0;
        }
        return (compileMillis() - markCompileMillis) * 1e6 / wall;
    }

    /** @return whether the compilers were quiet since the stretch began ({@link #QUIET_SHARE}) */
    public boolean quietSinceMark() {
        return shareSinceMark() <= QUIET_SHARE;
    }

    /**
     * @param share a share of one CPU
     * @return it as a percentage, for lines such as "the JIT used 12 % of a CPU"
     */
    public static String percent(double share) {
        return String.format(Locale.ROOT, "%.0f %%", share * 100);
    }

    /**
     * Goes on warming up after a time-based warm-up: runs {@code pass} (every method the timed runs will call, once)
     * over stretches of {@link #STRETCH_NANOS} until every rank's compilers were quiet over one, for four times the
     * warm-up at most ({@link #MAX_SETTLE_SECONDS} at most; {@link #MAX_SETTLE_PROPERTY} overrides it). Every rank
     * calls it with the same warm-up.
     *
     * @param ranks         how the ranks agree
     * @param pass          one warm-up pass
     * @param warmupSeconds the time-based warm-up that came before
     * @return the line to print: how long it took, or that the JIT was still compiling
     */
    public static String settle(Ranks ranks, Runnable pass, double warmupSeconds) {
        double max = Math.min(4 * warmupSeconds, MAX_SETTLE_SECONDS);
        String set = System.getProperty(MAX_SETTLE_PROPERTY);
        if (set != null) {
            try {
                max = Double.parseDouble(set);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(MAX_SETTLE_PROPERTY + " must be a number of seconds, not '" + set + "'");
            }
        }
        long maxNanos = (long) (max * 1e9);
        long start = System.nanoTime();
        JitActivity jit = new JitActivity();
        boolean quiet = false;
        double share = 0;
        while (ranks.rootSays(System.nanoTime() - start < maxNanos)) {
            jit.mark();
            long stretch = System.nanoTime();
            do {
                pass.run();
            } while (ranks.rootSays(System.nanoTime() - stretch < STRETCH_NANOS));
            share = jit.shareSinceMark();
            quiet = ranks.allSay(share <= QUIET_SHARE);
            if (quiet) {
                break;
            }
        }
        double more = (System.nanoTime() - start) / 1e9;
        return quiet
                ? String.format(Locale.ROOT, "warm-up: %.1f s more after the timed warm-up until the JIT was quiet (every"
                        + " rank's compilers under %s of a CPU for %d ms or more)", more, percent(QUIET_SHARE),
                        STRETCH_NANOS / 1_000_000)
                : String.format(Locale.ROOT, "warm-up: the JIT was still compiling %.1f s after the timed warm-up (rank"
                        + " 0's compilers: %s of a CPU over the last stretch): the runs may be noisy", more, percent(share));
    }

    private long compileMillis() {
        return bean != null && bean.isCompilationTimeMonitoringSupported() ? bean.getTotalCompilationTime() : 0;
    }
}
