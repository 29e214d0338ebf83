package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.MpException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Global arrays between ranks that are threads of this JVM, each with its own Mp (the process runs: GlobalArrayProcessTest). */
@Timeout(300)
class GlobalArrayTest {
    @TempDir
    Path base;

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void tenThousandRandomPatchesCrossingOwnersRoundTripExactly(int n) throws Exception {
        AtomicInteger moved = new AtomicInteger();
        GaRanks.run(n, base, ga -> moved.addAndGet(GaExercise.randomPatches(ga, 10_000 / n, 42)));
        assertEquals(10_000 / n * n, moved.get());
    }

    @ParameterizedTest
    @EnumSource(GaType.class)
    void concurrentAccumulatesFromEveryRankGiveTheExactSum(GaType type) throws Exception {
        GaRanks.run(4, base, ga -> GaExercise.accumulate(ga, type, 12));
    }

    @ParameterizedTest
    @ValueSource(strings = {"INT", "LONG"})
    void readIncFromEveryRankHandsOutEachValueOnce(String type) throws Exception {
        GaRanks.run(4, base, ga -> GaExercise.readInc(ga, GaType.valueOf(type), 300));
    }

    @Test
    void locateRegionNamesTheRanksWhoseDataAGetReturns() throws Exception {
        GaRanks.run(3, base, GaExercise::locateMatchesData);
    }

    @Test
    void fenceScatterGatherDuplicateAndMessages() throws Exception {
        GaRanks.run(3, base, ga -> {
            int me = ga.rank();
            GlobalArray a = ga.create("grid", GaType.DOUBLE, Distribution.even(3, 9, 8));
            GlobalArray b = a.duplicate("copy");
            assertEquals(a.distribution(), b.distribution());
            assertEquals("copy", b.name());
            assertThrows(IllegalStateException.class, ga::fence, "fence without initFence");
            ga.initFence();
            // Rank r writes row 3r..3r+2 through non-blocking puts from a heap buffer it then overwrites.
            double[] rows = new double[3 * 8];
            for (int i = 0; i < rows.length; i++) {
                rows[i] = me * 100 + i;
            }
            MemorySegment src = MemorySegment.ofArray(rows);
            GaHandle h = a.nbPut(new int[] {3 * me, 0}, new int[] {3 * me + 2, 7}, src, null);
            Arrays.fill(rows, -1); // the put copied it: staging, not the caller's array, travels
            ga.fence();
            assertTrue(h.isDone());
            ga.sync();
            int[][] subs = {{0, 0}, {8, 7}, {4, 3}, {3 * ((me + 1) % 3), 1}};
            MemorySegment vals = MemorySegment.ofArray(new double[subs.length]);
            a.gather(subs, vals);
            assertArrayEquals(new double[] {0, 200 + 23, 100 + 8 + 3, ((me + 1) % 3) * 100 + 1}, vals.toArray(JAVA_DOUBLE));
            ga.sync();
            if (me == 1) {
                b.scatter(MemorySegment.ofArray(new double[] {1.5, 2.5, 3.5}), new int[][] {{0, 0}, {8, 7}, {0, 0}});
            }
            ga.sync();
            MemorySegment corners = MemorySegment.ofArray(new double[2]);
            b.gather(new int[][] {{0, 0}, {8, 7}}, corners);
            assertArrayEquals(new double[] {3.5, 2.5}, corners.toArray(JAVA_DOUBLE), "the later of two writes wins");
            // Short messages: a ring, with one longer than a frame.
            MemorySegment msg = MemorySegment.ofArray(new byte[10_000 + me]);
            msg.fill((byte) (7 + me));
            if (me == 0) {
                ga.sendMsg(1, msg);
                MemorySegment in = ga.recvMsg(2);
                assertEquals(10_002, in.byteSize());
                assertEquals(9, in.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 10_001));
            } else {
                MemorySegment in = ga.recvMsg(me - 1);
                assertEquals(10_000 + me - 1, in.byteSize());
                ga.sendMsg((me + 1) % 3, msg);
            }
            assertThrows(IllegalArgumentException.class, () -> ga.sendMsg(me, msg));
            ga.sync();
            b.destroy();
            a.destroy();
        });
    }

    @Test
    void zeroFillAccessAndAnEmptyRank() throws Exception {
        GaRanks.run(3, base, ga -> {
            GlobalArray a = ga.create("split", GaType.INT, Distribution.splitPoints(5, 5, 12));
            GaPatch mine = a.distribution(ga.rank());
            assertEquals(ga.rank() == 1, mine.isEmpty());
            a.fill(7L);
            MemorySegment all = MemorySegment.ofArray(new int[12]);
            a.get(new int[] {0}, new int[] {11}, all, null);
            assertTrue(Arrays.stream(all.toArray(JAVA_INT)).allMatch(v -> v == 7), Arrays.toString(all.toArray(JAVA_INT)));
            ga.sync(); // every rank has read before any changes its block
            LocalBlock block = a.access();
            assertEquals(mine.elements() * 4, block.data().byteSize());
            if (!mine.isEmpty()) {
                block.data().setAtIndex(JAVA_INT, 0, 100 + ga.rank());
            }
            a.release();
            assertThrows(IllegalStateException.class, a::release);
            ga.sync();
            a.get(new int[] {0}, new int[] {11}, all, null);
            assertEquals(100, all.getAtIndex(JAVA_INT, 0));
            assertEquals(102, all.getAtIndex(JAVA_INT, 5));
            a.zero();
            a.get(new int[] {0}, new int[] {11}, all, null);
            assertTrue(Arrays.stream(all.toArray(JAVA_INT)).allMatch(v -> v == 0), Arrays.toString(all.toArray(JAVA_INT)));
            a.destroy();
        });
    }

    @Test
    void badInputGetsPreciseErrorsAndChangesNothing() throws Exception {
        GaRanks.run(2, base, ga -> {
            GlobalArray a = ga.create("guarded", GaType.DOUBLE, Distribution.even(2, 4, 6));
            GlobalArray counts = ga.create("ints", GaType.INT, Distribution.even(2, 4));
            double[] init = new double[24];
            for (int i = 0; i < init.length; i++) {
                init[i] = i;
            }
            if (ga.rank() == 0) {
                a.put(new int[] {0, 0}, new int[] {3, 5}, MemorySegment.ofArray(init), null);
            }
            ga.sync();
            MemorySegment ok = MemorySegment.ofArray(new double[24]);
            MemorySegment small = MemorySegment.ofArray(new double[5]);
            int[] lo = {0, 0};
            int[] hi = {3, 5};
            expect(IllegalArgumentException.class, "patch [0, 0]..[4, 5] is out of bounds of the array [4, 6] in dimension 0"
                    + " (needs 0 <= lo <= hi < extent)", () -> a.put(lo, new int[] {4, 5}, ok, null));
            expect(IllegalArgumentException.class, "patch [-1, 0]..[3, 5] is out of bounds", () -> a.get(new int[] {-1, 0}, hi, ok, null));
            expect(IllegalArgumentException.class, "the buffer holds 40 bytes; the patch [0, 0]..[3, 5] needs 192",
                    () -> a.put(lo, hi, small, null));
            expect(IllegalArgumentException.class, "the buffer holds 192 bytes; the patch [0, 0]..[3, 5] with ld [7] needs 216",
                    () -> a.acc(lo, hi, ok, new int[] {7}, 1.0));
            expect(IllegalArgumentException.class, "ld[0] = 5 is below the patch's extent 6 in dimension 1",
                    () -> a.get(lo, hi, ok, new int[] {5}));
            expect(IllegalArgumentException.class, "ld has 2 entries; a 2-D patch needs 1", () -> a.get(lo, hi, ok, new int[] {6, 6}));
            expect(IllegalArgumentException.class, "the buffer is read-only; a get writes into it",
                    () -> a.get(lo, hi, ok.asReadOnly(), null));
            expect(IllegalArgumentException.class, "readInc needs an INT or LONG array; 'guarded' is DOUBLE", () -> a.readInc(1, 0, 0));
            expect(IllegalArgumentException.class, "alpha 0.5 is not an integer of magnitude at most 2^53: INT arrays take integer factors",
                    () -> counts.acc(new int[] {0}, new int[] {3}, MemorySegment.ofArray(new int[4]), null, 0.5));
            expect(IllegalArgumentException.class, "alpha NaN is not a finite number", () -> a.acc(lo, hi, ok, null, Double.NaN));
            expect(IllegalArgumentException.class, "subscripts[1] [0, 6] is outside the array [4, 6] in dimension 1",
                    () -> a.scatter(MemorySegment.ofArray(new double[2]), new int[][] {{0, 0}, {0, 6}}));
            expect(IllegalArgumentException.class, "the buffer holds 8 bytes; 2 elements needs 16",
                    () -> a.gather(new int[][] {{0, 0}, {0, 1}}, MemorySegment.ofArray(new double[1])));
            expect(NullPointerException.class, "buf must not be null", () -> a.put(lo, hi, null, null));
            expect(IllegalArgumentException.class, "the distribution is for 3 ranks, the job has 2",
                    () -> ga.create("x", GaType.INT, Distribution.even(3, 4)));
            expect(IllegalArgumentException.class, "bytes must be >= 1, got 0", () -> ga.registeredBuffer(0));
            ga.sync();
            MemorySegment now = MemorySegment.ofArray(new double[24]);
            a.get(lo, hi, now, null);
            assertArrayEquals(init, now.toArray(JAVA_DOUBLE), "nothing changed");
            counts.destroy();
            expect(IllegalStateException.class, "global array 'ints' was destroyed", () -> counts.readInc(1, 0));
            expect(IllegalStateException.class, "global array 'ints' was destroyed", counts::destroy);
            expect(IllegalStateException.class, "global array 'ints' was destroyed",
                    () -> counts.get(new int[] {0}, new int[] {3}, MemorySegment.ofArray(new int[4]), null));
            assertTrue(counts.isDestroyed());
            assertFalse(a.isDestroyed());
            a.destroy();
        });
    }

    @Test
    void closingTheRuntimeDestroysItsArraysAndRefusesFurtherCalls() throws Exception {
        GaRanks.run(2, base, ga -> {
            GlobalArray a = ga.create("left", GaType.LONG, Distribution.even(2, 8));
            ga.close();
            assertTrue(a.isDestroyed());
            expect(IllegalStateException.class, "the GlobalArrays runtime of rank " + ga.rank() + " is closed",
                    () -> ga.create("y", GaType.LONG, Distribution.even(2, 8)));
        });
    }

    private static void expect(Class<? extends Throwable> type, String message, Executable call) {
        Throwable t = assertThrows(type, call);
        assertTrue(t.getMessage().startsWith(message), "message '" + t.getMessage() + "' should start with '" + message + "'");
    }

    @Test
    void mpFailuresAreMpExceptions() {
        // The contract the dead-rank process test relies on: failures of transfers surface as MpException.
        assertTrue(RuntimeException.class.isAssignableFrom(MpException.class));
    }
}
