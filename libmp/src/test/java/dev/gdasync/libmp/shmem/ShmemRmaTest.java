package dev.gdasync.libmp.shmem;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Puts and gets between 2 to 4 PEs: random sizes and offsets, typed elements, single elements, ordering by fence. */
@Timeout(300)
class ShmemRmaTest {
    /** Each writer owns a region of this many bytes in every PE's block: larger than staging, so transfers split. */
    private static final int REGION = (int) Shmem.STAGING_BYTES + 300_000;

    @TempDir
    Path base;

    @Test
    void randomPutsAndGetsRoundTripOnEveryPe() throws Exception {
        for (int n = 2; n <= 4; n += 2) {
            int pes = n;
            ShmemRanks.run(pes, base, (long) REGION * pes + 4096, shmem -> roundTrips(shmem, pes));
        }
    }

    private static void roundTrips(Shmem shmem, int n) {
        int me = shmem.myPe();
        MemorySegment block = shmem.malloc((long) REGION * n);
        MemorySegment mine = block.asSlice((long) REGION * me, REGION);
        byte[][] expected = new byte[n][REGION];
        SplittableRandom rnd = new SplittableRandom(1234 + me);
        for (int t = 0; t < n; t++) {
            // Start from zeros everywhere this PE writes.
            shmem.put(mine, MemorySegment.ofArray(new byte[REGION]), t);
        }
        shmem.quiet();
        for (int i = 0; i < 300; i++) {
            int t = rnd.nextInt(n);
            int size = i % 50 == 0 ? 1 + rnd.nextInt(REGION) : 1 + rnd.nextInt(i % 3 == 0 ? 70_000 : 64);
            int off = rnd.nextInt(REGION - size + 1);
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            if (rnd.nextBoolean()) {
                shmem.put(mine.asSlice(off), MemorySegment.ofArray(data), t);
            } else {
                shmem.putNbi(mine.asSlice(off), MemorySegment.ofArray(data), t);
            }
            System.arraycopy(data, 0, expected[t], off, size);
            if (i % 7 == 0) {
                int gs = 1 + rnd.nextInt(Math.min(REGION, 200_000));
                int go = rnd.nextInt(REGION - gs + 1);
                byte[] got = new byte[gs];
                if (rnd.nextBoolean()) {
                    shmem.get(MemorySegment.ofArray(got), mine.asSlice(go), t);
                } else {
                    shmem.quiet();
                    shmem.getNbi(MemorySegment.ofArray(got), mine.asSlice(go), t);
                    shmem.quiet();
                }
                assertArrayEquals(Arrays.copyOfRange(expected[t], go, go + gs), got,
                        "PE " + me + " read back " + gs + " bytes at " + go + " of PE " + t);
            }
        }
        shmem.barrierAll();
        for (int t = 0; t < n; t++) {
            byte[] got = new byte[REGION];
            shmem.get(MemorySegment.ofArray(got), mine, t);
            assertArrayEquals(expected[t], got, "PE " + me + "'s region at PE " + t);
        }
        shmem.barrierAll();
        shmem.free(block);
    }

    @Test
    void typedAndSingleElementsLandWhereTheSymmetricAddressSays() throws Exception {
        ShmemRanks.run(3, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            int n = shmem.nPes();
            MemorySegment longs = shmem.calloc(8L * n, 8);
            MemorySegment ints = shmem.calloc(4L * n, 4);
            MemorySegment doubles = shmem.calloc(4L * n, 8);
            MemorySegment one = shmem.calloc(n, 8);
            for (int t = 0; t < n; t++) {
                long[] l = new long[8];
                int[] i = new int[4];
                double[] d = new double[4];
                for (int k = 0; k < 8; k++) {
                    l[k] = (long) me << 40 | (long) t << 20 | k;
                }
                for (int k = 0; k < 4; k++) {
                    i[k] = me * 1000 + t * 10 + k;
                    d[k] = me + t / 10.0 + k / 100.0;
                }
                shmem.put(longs.asSlice(64L * me), l, t);
                shmem.put(ints.asSlice(16L * me), i, t);
                shmem.put(doubles.asSlice(32L * me), d, t);
                shmem.pLong(one.asSlice(8L * me), -1L - me * 7L - t, t);
            }
            shmem.barrierAll();
            for (int w = 0; w < n; w++) {
                for (int k = 0; k < 8; k++) {
                    assertEquals((long) w << 40 | (long) me << 20 | k, longs.getAtIndex(JAVA_LONG, 8L * w + k));
                }
                assertEquals(-1L - w * 7L - me, one.getAtIndex(JAVA_LONG, w));
            }
            int next = (me + 1) % n;
            long[] l = new long[8];
            shmem.get(l, longs.asSlice(64L * me), next);
            for (int k = 0; k < 8; k++) {
                assertEquals((long) me << 40 | (long) next << 20 | k, l[k]);
            }
            int[] i = new int[4];
            shmem.get(i, ints.asSlice(16L * me), next);
            assertArrayEquals(new int[] {me * 1000 + next * 10, me * 1000 + next * 10 + 1, me * 1000 + next * 10 + 2,
                    me * 1000 + next * 10 + 3}, i);
            double[] d = new double[4];
            shmem.get(d, doubles.asSlice(32L * me), next);
            assertEquals(me + next / 10.0 + 3 / 100.0, d[3]);
            assertEquals(me * 1000 + next * 10 + 2, shmem.gInt(ints.asSlice(16L * me + 8), next));
            assertEquals(me + next / 10.0 + 1 / 100.0, shmem.gDouble(doubles.asSlice(32L * me + 8), next));
            assertEquals(-1L - me * 7L - next, shmem.gLong(one.asSlice(8L * me), next));
            shmem.pInt(ints.asSlice(16L * me + 4), 77, next);
            shmem.pDouble(doubles.asSlice(32L * me + 16), 2.5, next);
            shmem.barrierAll();
            int prev = (me + n - 1) % n;
            assertEquals(77, ints.getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, 4L * prev + 1));
            assertEquals(2.5, doubles.getAtIndex(java.lang.foreign.ValueLayout.JAVA_DOUBLE, 4L * prev + 2));
        });
    }

    /**
     * {put 16 KiB; fence; p(flag, i)} against waitUntil(flag, EQ, i): the reader checks the whole payload each time
     * it sees the flag, then acknowledges so the writer may overwrite it. Each PE writes to the next and reads from the
     * previous, so every PE is a writer and a reader at once.
     */
    @Test
    void aFlagPutAfterAFenceIsNeverSeenBeforeTheData() throws Exception {
        int iterations = 1000;
        int payload = 16 * 1024;
        ShmemRanks.run(3, base, 1 << 20, shmem -> {
            int me = shmem.myPe();
            int n = shmem.nPes();
            int next = (me + 1) % n;
            int prev = (me + n - 1) % n;
            MemorySegment data = shmem.calloc(payload / 8, 8);
            MemorySegment flag = shmem.calloc(1, 8);
            MemorySegment ack = shmem.calloc(1, 8);
            long[] out = new long[payload / 8];
            int mismatches = 0;
            for (int i = 1; i <= iterations; i++) {
                Arrays.fill(out, i);
                out[i % out.length] = -i;
                shmem.putNbi(data, MemorySegment.ofArray(out), next);
                shmem.fence();
                shmem.pLong(flag, i, next);
                shmem.waitUntil(flag, ShmemCmp.EQ, i);
                for (int k = 0; k < out.length; k++) {
                    long want = k == i % out.length ? -i : i;
                    if (data.getAtIndex(JAVA_LONG, k) != want) {
                        mismatches++;
                    }
                }
                shmem.pLong(ack, i, prev);
                shmem.waitUntil(ack, ShmemCmp.GE, i);
            }
            assertEquals(0, mismatches, "payload words that did not match the flag's iteration");
            shmem.barrierAll();
        });
    }
}
