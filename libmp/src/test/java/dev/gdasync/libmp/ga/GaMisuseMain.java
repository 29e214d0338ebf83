package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.testutil.Misuse;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The misuse suite of global arrays between two rank processes (run by {@link GaMisuseProcessTest}): patches out of
 * an array's bounds, wrong leading dimensions, short buffers, a fractional alpha for a LONG array, a destroyed array,
 * and creates the ranks disagree on. Each case asserts the exact message, that it came at once, that every element
 * of the target array and of the arrays created before and after it is unchanged on both ranks, and that the arrays
 * still work afterwards.
 */
public final class GaMisuseMain {
    private static final int N = 64;

    private GaMisuseMain() {
    }

    /**
     * @param args none
     */
    public static void main(String[] args) {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(60));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg);
             GlobalArrays ga = new GlobalArrays(mp); Arena arena = Arena.ofConfined()) {
            new Suite(ga, arena).run();
        }
    }

    private static final class Suite {
        final GlobalArrays ga;
        final GlobalArray before;
        final GlobalArray target;
        final GlobalArray after;
        final MemorySegment buf;
        final Misuse m = new Misuse();

        Suite(GlobalArrays ga, Arena arena) {
            this.ga = ga;
            Distribution d = Distribution.even(2, N);
            before = ga.create("before", GaType.LONG, d);
            target = ga.create("target", GaType.LONG, d);
            after = ga.create("after", GaType.LONG, d);
            before.fill(-1L);
            target.fill(7L);
            after.fill(-1L);
            buf = arena.allocate(8L * 2 * N, 8);
            for (int i = 0; i < 2 * N; i++) {
                buf.setAtIndex(JAVA_LONG, i, 1000 + i);
            }
        }

        /** Every element of the three arrays' local blocks on this rank, after a sync. */
        String canaries() {
            ga.sync();
            String p = block(before, -1L);
            p = p != null ? p : block(target, 7L);
            return p != null ? p : block(after, -1L);
        }

        String block(GlobalArray a, long want) {
            MemorySegment data = a.access().data();
            try {
                for (long i = 0; i < N / 2; i++) {
                    long v = data.getAtIndex(JAVA_LONG, i);
                    if (v != want) {
                        return "rank " + ga.rank() + ": " + a.name() + "'s local element " + i + " is " + v;
                    }
                }
                return null;
            } finally {
                a.release();
            }
        }

        /** GlobalArrays.create's refusal on this rank when rank 0 called with {@code zero} and rank 1 with {@code one}. */
        String disagree(int call, String name, String zero, String one, String what) {
            int me = ga.rank();
            int other = 1 - me;
            return "GlobalArrays.create #" + call + " of array '" + name + "': rank " + other + " called create #" + call
                    + " with " + (other == 0 ? zero : one) + " over 2 ranks (grid [2]), rank " + me + " called create #"
                    + call + " with " + (me == 0 ? zero : one) + " over 2 ranks (grid [2]): the ranks disagree on the "
                    + what + "; every rank creates each array with the same name, type and distribution, in the same"
                    + " order. Nothing was created";
        }

        void run() {
            Misuse.Check canaries = this::canaries;
            int[] lo = {N - 4};
            m.expect("put-past-the-end", IllegalArgumentException.class, "patch [60]..[64] is out of bounds of the array [64] in dimension 0 (needs 0 <= lo <= hi < extent)",
                    () -> target.put(lo, new int[] {N}, buf, null), canaries);
            m.expect("get-past-the-end", IllegalArgumentException.class, "patch [60]..[67] is out of bounds of the array [64] in dimension 0 (needs 0 <= lo <= hi < extent)",
                    () -> target.get(lo, new int[] {N + 3}, buf, null), canaries);
            m.expect("acc-below-zero", IllegalArgumentException.class, "patch [-1]..[3] is out of bounds of the array [64] in dimension 0 (needs 0 <= lo <= hi < extent)",
                    () -> target.acc(new int[] {-1}, new int[] {3}, buf, null, 1), canaries);
            m.expect("put-hi-below-lo", IllegalArgumentException.class, "patch [10]..[8] is out of bounds of the array [64] in dimension 0 (needs 0 <= lo <= hi < extent)",
                    () -> target.put(new int[] {10}, new int[] {8}, buf, null), canaries);
            m.expect("put-wrong-rank-of-indices", IllegalArgumentException.class,
                    "lo and hi need 1 indices, got 2 and 2",
                    () -> target.put(new int[] {0, 0}, new int[] {1, 1}, buf, null), canaries);
            m.expect("put-short-buffer", IllegalArgumentException.class,
                    "the buffer holds 504 bytes; the patch [0]..[63] needs 512",
                    () -> target.put(new int[] {0}, new int[] {N - 1}, buf.asSlice(0, 8L * (N - 1)), null), canaries);
            m.expect("get-read-only-buffer", IllegalArgumentException.class,
                    "the buffer is read-only; a get writes into it",
                    () -> target.get(new int[] {0}, new int[] {3}, buf.asSlice(0, 32).asReadOnly(), null), canaries);
            m.expect("acc-fractional-alpha-on-long", IllegalArgumentException.class,
                    "alpha 0.5 is not an integer of magnitude at most 2^53: LONG arrays take integer factors",
                    () -> target.acc(new int[] {0}, new int[] {N - 1}, buf, null, 0.5), canaries);
            m.expect("scatter-outside", IllegalArgumentException.class,
                    "subscripts[1] [64] is outside the array [64] in dimension 0",
                    () -> target.scatter(buf.asSlice(0, 16), new int[][] {{1}, {N}}), canaries);
            m.expect("readInc-outside", IllegalArgumentException.class,
                    "subscript [64] is outside the array [64] in dimension 0",
                    () -> target.readInc(1, N), canaries);
            m.expect("create-dimensions-differ", IllegalArgumentException.class,
                    disagree(4, "d", "DOUBLE [8]", "DOUBLE [16]", "dimensions"),
                    () -> ga.create("d", GaType.DOUBLE, Distribution.even(2, ga.rank() == 0 ? 8 : 16)), canaries);
            m.expect("create-types-differ", IllegalArgumentException.class,
                    disagree(5, "t", "INT [8]", "LONG [8]", "type"),
                    () -> ga.create("t", ga.rank() == 0 ? GaType.INT : GaType.LONG, Distribution.even(2, 8)), canaries);
            m.expect("create-names-differ", IllegalArgumentException.class,
                    disagree(6, ga.rank() == 0 ? "x" : "y", "INT [8]", "INT [8]", "name"),
                    () -> ga.create(ga.rank() == 0 ? "x" : "y", GaType.INT, Distribution.even(2, 8)), canaries);
            GlobalArray gone = ga.create("gone", GaType.LONG, Distribution.even(2, 8));
            gone.destroy();
            m.expect("put-on-a-destroyed-array", IllegalStateException.class, "global array 'gone' was destroyed",
                    () -> gone.put(new int[] {0}, new int[] {1}, buf, null), canaries);
            m.expect("still-usable", IllegalStateException.class, "usable", () -> {
                GlobalArray z = ga.create("z", GaType.LONG, Distribution.even(2, N));
                if (ga.rank() == 0) {
                    z.put(new int[] {0}, new int[] {N - 1}, buf, null);
                }
                ga.sync();
                MemorySegment got = Arena.ofAuto().allocate(8L * N, 8);
                z.get(new int[] {0}, new int[] {N - 1}, got, null);
                for (int i = 0; i < N; i++) {
                    if (got.getAtIndex(JAVA_LONG, i) != 1000 + i) {
                        throw new AssertionError("element " + i + " is " + got.getAtIndex(JAVA_LONG, i));
                    }
                }
                ga.sync();
                z.destroy();
                throw new IllegalStateException("usable");
            }, canaries);
            m.done();
        }
    }
}
