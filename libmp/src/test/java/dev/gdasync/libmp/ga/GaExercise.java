package dev.gdasync.libmp.ga;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The global-array checks every rank runs, in threads ({@link GlobalArrayTest}) and in processes
 * ({@link GaExerciseMain}): each throws an AssertionError naming what differed.
 */
final class GaExercise {
    private GaExercise() {
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /**
     * Random patches crossing owner boundaries: each rank owns plane {@code me} of a 3-D array cut into blocks in
     * dimensions 1 and 2 (so every owner holds part of every plane), keeps a mirror of it, and alternates random puts
     * and gets with random leading dimensions, through heap buffers, a registered buffer and non-blocking calls.
     *
     * @return the patches moved by this rank
     */
    static int randomPatches(GlobalArrays ga, int patches, long seed) {
        int n = ga.size();
        int me = ga.rank();
        int d1 = 24;
        int d2 = 30;
        int[][] starts = n == 1 ? new int[][] {{0}, {0}, {0}} : n == 2 ? new int[][] {{0}, {0, 11}, {0}}
                : n == 3 ? new int[][] {{0}, {0, 5, 17}, {0}} : new int[][] {{0}, {0, 11}, {0, 7}};
        GlobalArray a = ga.create("patches", GaType.DOUBLE, Distribution.irregular(n, new int[] {n, d1, d2}, starts));
        double[][] mirror = new double[d1][d2];
        Random rnd = new Random(seed + me);
        GaBuffer reg = ga.registeredBuffer(8L * 40 * 40);
        int moved = 0;
        for (int t = 0; t < patches; t++) {
            int lo1 = rnd.nextInt(d1);
            int hi1 = lo1 + rnd.nextInt(d1 - lo1);
            int lo2 = rnd.nextInt(d2);
            int hi2 = lo2 + rnd.nextInt(d2 - lo2);
            int[] lo = {me, lo1, lo2};
            int[] hi = {me, hi1, hi2};
            int e1 = hi1 - lo1 + 1;
            int e2 = hi2 - lo2 + 1;
            int ld1 = e1 + rnd.nextInt(3);
            int ld2 = e2 + rnd.nextInt(3);
            int[] ld = {ld1, ld2};
            long elements = (long) ld1 * ld2;
            int how = rnd.nextInt(4);
            MemorySegment buf = how == 0 ? reg.segment().asSlice(0, elements * 8)
                    : MemorySegment.ofArray(new double[(int) elements]);
            if (rnd.nextBoolean()) {
                for (int i = 0; i < e1; i++) {
                    for (int j = 0; j < e2; j++) {
                        double v = rnd.nextDouble() + t;
                        buf.setAtIndex(JAVA_DOUBLE, (long) i * ld2 + j, v);
                        mirror[lo1 + i][lo2 + j] = v;
                    }
                }
                if (how == 1) {
                    ga.nbWait(a.nbPut(lo, hi, buf, ld));
                } else {
                    a.put(lo, hi, buf, ld);
                }
            } else {
                if (how == 1) {
                    GaHandle h = a.nbGet(lo, hi, buf, ld);
                    ga.nbWait(h);
                    check(h.isDone(), "handle done after nbWait");
                } else {
                    a.get(lo, hi, buf, ld);
                }
                for (int i = 0; i < e1; i++) {
                    for (int j = 0; j < e2; j++) {
                        double got = buf.getAtIndex(JAVA_DOUBLE, (long) i * ld2 + j);
                        if (got != mirror[lo1 + i][lo2 + j]) {
                            throw new AssertionError("rank " + me + " patch " + t + " " + Arrays.toString(lo) + ".."
                                    + Arrays.toString(hi) + " ld " + Arrays.toString(ld) + ": element [" + (lo1 + i)
                                    + "][" + (lo2 + j) + "] is " + got + ", put " + mirror[lo1 + i][lo2 + j]);
                        }
                    }
                }
            }
            moved++;
        }
        reg.close();
        ga.sync();
        // This rank's plane, read back inside one whole-array get that crosses every owner.
        MemorySegment all = MemorySegment.ofArray(new double[n * d1 * d2]);
        a.get(new int[] {0, 0, 0}, new int[] {n - 1, d1 - 1, d2 - 1}, all, null);
        for (int i = 0; i < d1; i++) {
            for (int j = 0; j < d2; j++) {
                check(all.getAtIndex(JAVA_DOUBLE, ((long) me * d1 + i) * d2 + j) == mirror[i][j],
                        "whole-array get differs at [" + me + "][" + i + "][" + j + "]");
            }
        }
        ga.sync();
        a.destroy();
        return moved;
    }

    /** Every rank accumulates ones (scaled) over patches that cross every owner; the sums are exact. */
    static void accumulate(GlobalArrays ga, GaType type, int rounds) {
        int n = ga.size();
        int[] dims = {17, 19};
        GlobalArray a = ga.create("acc-" + type, type, Distribution.even(n, dims));
        a.fill(5L);
        MemorySegment ones = MemorySegment.ofArray(new byte[17 * 19 * type.bytes()]);
        type.fill(ones, 17 * 19, 1, 1.0);
        int[] lo = {0, 0};
        int[] hi = {16, 18};
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == 0) {
                a.acc(lo, hi, ones, null, 2);
            } else {
                GaHandle h = a.nbAcc(new int[] {3, 4}, new int[] {12, 15}, ones, new int[] {19}, 1);
                ga.nbWait(h);
            }
        }
        ga.sync();
        MemorySegment got = MemorySegment.ofArray(new byte[17 * 19 * type.bytes()]);
        a.get(lo, hi, got, null);
        int evens = (rounds + 1) / 2;
        int odds = rounds / 2;
        for (int i = 0; i < 17; i++) {
            for (int j = 0; j < 19; j++) {
                boolean inner = i >= 3 && i <= 12 && j >= 4 && j <= 15;
                double expect = 5 + n * (2.0 * evens + (inner ? odds : 0));
                double v = switch (type) {
                    case INT -> got.getAtIndex(JAVA_INT_UNALIGNED, i * 19 + j);
                    case LONG -> got.getAtIndex(JAVA_LONG_UNALIGNED, i * 19 + j);
                    case FLOAT -> got.getAtIndex(JAVA_FLOAT_UNALIGNED, i * 19 + j);
                    case DOUBLE -> got.getAtIndex(JAVA_DOUBLE_UNALIGNED, i * 19 + j);
                };
                check(v == expect, type + " element [" + i + "][" + j + "] is " + v + ", expected " + expect);
            }
        }
        ga.sync();
        a.destroy();
    }

    /**
     * Every rank takes values from two counters of one array with readInc; rank 0 collects every rank's values by
     * short messages and checks each value was handed out exactly once.
     */
    static void readInc(GlobalArrays ga, GaType type, int each) {
        int n = ga.size();
        int me = ga.rank();
        // Elements 2 and 3 share an 8-byte word: an INT counter must not disturb its neighbour.
        GlobalArray a = ga.create("counters-" + type, type, Distribution.splitPoints(splits(n, 9)));
        int[] first = {2};
        int[] second = {3};
        int[] last = {8};
        MemorySegment mine = MemorySegment.ofArray(new long[3 * each]);
        for (int i = 0; i < each; i++) {
            mine.setAtIndex(JAVA_LONG, i, a.readInc(1, first));
            mine.setAtIndex(JAVA_LONG, each + i, a.readInc(1, second));
            mine.setAtIndex(JAVA_LONG, 2L * each + i, a.readInc(3, last));
        }
        ga.sync();
        if (me != 0) {
            ga.sendMsg(0, mine);
        } else {
            Set<Long> a2 = new HashSet<>();
            Set<Long> a3 = new HashSet<>();
            Set<Long> a8 = new HashSet<>();
            for (int r = 0; r < n; r++) {
                MemorySegment m = r == 0 ? mine : ga.recvMsg(r);
                check(m.byteSize() == 24L * each, "message from rank " + r + " has " + m.byteSize() + " bytes");
                for (int i = 0; i < each; i++) {
                    check(a2.add(m.getAtIndex(JAVA_LONG, i)), "value handed out twice at element 2");
                    check(a3.add(m.getAtIndex(JAVA_LONG, each + i)), "value handed out twice at element 3");
                    check(a8.add(m.getAtIndex(JAVA_LONG, 2L * each + i)), "value handed out twice at element 8");
                }
            }
            for (long v = 0; v < (long) n * each; v++) {
                check(a2.contains(v) && a3.contains(v) && a8.contains(3 * v), "value " + v + " was never handed out");
            }
            MemorySegment all = MemorySegment.ofArray(new long[9]);
            MemorySegment raw = MemorySegment.ofArray(new byte[9 * type.bytes()]);
            a.get(new int[] {0}, new int[] {8}, raw, null);
            for (int i = 0; i < 9; i++) {
                all.setAtIndex(JAVA_LONG, i, type == GaType.INT ? raw.getAtIndex(JAVA_INT_UNALIGNED, i) : raw.getAtIndex(JAVA_LONG_UNALIGNED, i));
            }
            long total = (long) n * each;
            check(Arrays.equals(all.toArray(JAVA_LONG), new long[] {0, 0, total, total, 0, 0, 0, 0, 3 * total}),
                    "counters end at " + Arrays.toString(all.toArray(JAVA_LONG)));
        }
        ga.sync();
        a.destroy();
    }

    /** CoGA split points for n ranks over len elements, with rank 1 (if any) holding nothing. */
    static int[] splits(int n, int len) {
        int[] s = new int[n];
        for (int r = 0; r < n; r++) {
            s[r] = r == n - 1 ? len : Math.min(len, (r + 1) * len / n);
        }
        if (n > 2) {
            s[1] = s[0];
        }
        return s;
    }

    /** The owners named by locateRegion hold exactly the parts a get returns. */
    static void locateMatchesData(GlobalArrays ga) {
        int n = ga.size();
        GlobalArray a = ga.create("owners", GaType.INT, Distribution.regular(n, new int[] {6, 10}, new int[] {2, 3}));
        LocalBlock b = a.access();
        GaPatch p = b.patch();
        for (long i = 0; i < p.elements(); i++) {
            b.data().setAtIndex(JAVA_INT, i, ga.rank() + 1);
        }
        a.release();
        ga.sync();
        List<GaPatch> parts = a.locateRegion(new int[] {0, 0}, new int[] {5, 9});
        MemorySegment got = MemorySegment.ofArray(new int[60]);
        a.get(new int[] {0, 0}, new int[] {5, 9}, got, null);
        for (GaPatch part : parts) {
            for (int i = part.lo(0); i <= part.hi(0); i++) {
                for (int j = part.lo(1); j <= part.hi(1); j++) {
                    check(got.getAtIndex(JAVA_INT, i * 10 + j) == part.rank() + 1, "element [" + i + "][" + j
                            + "] comes from rank " + (got.getAtIndex(JAVA_INT, i * 10 + j) - 1) + ", locate says " + part.rank());
                    check(a.locate(i, j) == part.rank(), "locate [" + i + "][" + j + "]");
                }
            }
        }
        ga.sync();
        a.destroy();
    }
}
