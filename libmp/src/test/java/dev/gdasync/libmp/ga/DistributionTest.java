package dev.gdasync.libmp.ga;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Distributions tile the index space exactly once, for 1 to 4 ranks, 1-D to 3-D, regular and irregular. */
class DistributionTest {

    private static List<Distribution> cases(int ranks) {
        List<Distribution> d = new ArrayList<>();
        d.add(Distribution.even(ranks, 1));
        d.add(Distribution.even(ranks, 13));
        d.add(Distribution.even(ranks, 7, 5));
        d.add(Distribution.even(ranks, 3, 4, 5));
        d.add(Distribution.regular(ranks, new int[] {20, 9}, new int[] {8, -1}));
        d.add(Distribution.regular(ranks, new int[] {6, 6, 6}, new int[] {0, 4, 2}));
        d.add(Distribution.splitPoints(GaExercise.splits(ranks, 11)));
        if (ranks >= 2) {
            d.add(Distribution.irregular(ranks, new int[] {9, 4}, new int[][] {{0, 2}, {0}}));
            d.add(Distribution.irregular(ranks, new int[] {5, 6, 7}, new int[][] {{0}, {0, 5}, {0}}));
        }
        if (ranks >= 4) {
            d.add(Distribution.irregular(ranks, new int[] {5, 6, 7}, new int[][] {{0, 1}, {0}, {0, 3}}));
        }
        return d;
    }

    @Test
    void everyElementHasExactlyOneOwnerAndLocateAgrees() {
        for (int ranks = 1; ranks <= 4; ranks++) {
            for (Distribution d : cases(ranks)) {
                int[] dims = d.dims();
                int[] count = new int[(int) d.elements()];
                for (int r = 0; r < ranks; r++) {
                    GaPatch b = d.block(r);
                    assertEquals(r, b.rank());
                    if (b.isEmpty()) {
                        assertEquals(0, b.elements(), d + " rank " + r);
                        continue;
                    }
                    int[] i = b.lo();
                    for (;;) {
                        count[linear(i, dims)]++;
                        assertEquals(r, d.owner(i), d + " owner of " + Arrays.toString(i));
                        int k = dims.length - 1;
                        while (k >= 0 && i[k] == b.hi(k)) {
                            i[k] = b.lo(k);
                            k--;
                        }
                        if (k < 0) {
                            break;
                        }
                        i[k]++;
                    }
                }
                for (int e = 0; e < count.length; e++) {
                    assertEquals(1, count[e], d + ": element " + e + " is owned " + count[e] + " times");
                }
            }
        }
    }

    @Test
    void ownersOfARandomPatchPartitionItInRankOrder() {
        Random rnd = new Random(7);
        for (int ranks = 1; ranks <= 4; ranks++) {
            for (Distribution d : cases(ranks)) {
                int[] dims = d.dims();
                for (int t = 0; t < 200; t++) {
                    int[] lo = new int[dims.length];
                    int[] hi = new int[dims.length];
                    long volume = 1;
                    for (int k = 0; k < dims.length; k++) {
                        lo[k] = rnd.nextInt(dims[k]);
                        hi[k] = lo[k] + rnd.nextInt(dims[k] - lo[k]);
                        volume *= hi[k] - lo[k] + 1;
                    }
                    List<GaPatch> parts = d.owners(lo, hi);
                    long sum = 0;
                    for (int p = 0; p < parts.size(); p++) {
                        GaPatch part = parts.get(p);
                        assertTrue(p == 0 || parts.get(p - 1).rank() < part.rank(), "rank order");
                        assertTrue(!part.isEmpty());
                        GaPatch block = d.block(part.rank());
                        for (int k = 0; k < dims.length; k++) {
                            assertTrue(part.lo(k) >= Math.max(lo[k], block.lo(k)) && part.hi(k) <= Math.min(hi[k], block.hi(k)));
                        }
                        sum += part.elements();
                    }
                    assertEquals(volume, sum, d + " patch " + Arrays.toString(lo) + ".." + Arrays.toString(hi));
                }
            }
        }
    }

    @Test
    void regularGridsRespectChunkMinimumsAndBalance() {
        Distribution d = Distribution.regular(4, new int[] {20, 9}, new int[] {8, -1});
        assertArrayEquals(new int[] {2, 2}, d.grid(), "20/8 allows 2 blocks in dimension 0");
        for (int r = 0; r < 4; r++) {
            assertTrue(d.block(r).extent(0) >= 8);
        }
        assertArrayEquals(new int[] {2, 2}, Distribution.even(4, 8, 8).grid(), "square blocks beat strips");
        assertArrayEquals(new int[] {3}, Distribution.regular(4, new int[] {10}, new int[] {3}).grid());
        Distribution few = Distribution.regular(4, new int[] {10}, new int[] {3});
        assertTrue(few.block(3).isEmpty(), "the fourth rank holds nothing: " + few.block(3));
        assertArrayEquals(new int[] {-1}, few.block(3).hi());
    }

    @Test
    void coGaSplitPointsGiveEachRankItsRangeAndEmptyRanksSaySo() {
        Distribution d = Distribution.splitPoints(4, 4, 9);
        assertEquals(3, d.ranks());
        assertArrayEquals(new int[] {9}, d.dims());
        assertEquals("rank 0 [0]..[3]", d.block(0).toString());
        assertTrue(d.block(1).isEmpty());
        assertEquals("rank 1 empty", d.block(1).toString());
        assertArrayEquals(new int[] {4}, d.block(2).lo());
        assertArrayEquals(new int[] {8}, d.block(2).hi());
        assertEquals(2, d.owner(4));
    }

    @Test
    void badDistributionsAreRefusedPrecisely() {
        assertEquals("ranks must be >= 1, got 0", assertThrows(IllegalArgumentException.class, () -> Distribution.even(0, 4)).getMessage());
        assertEquals("an array has 1 to 3 dimensions, got 4",
                assertThrows(IllegalArgumentException.class, () -> Distribution.even(2, 1, 2, 3, 4)).getMessage());
        assertEquals("dims[1] is 0: every extent is >= 1",
                assertThrows(IllegalArgumentException.class, () -> Distribution.even(2, 3, 0)).getMessage());
        assertEquals("chunk[0] is -2: a minimum block extent is >= 1, or 0 or -1 for none",
                assertThrows(IllegalArgumentException.class, () -> Distribution.regular(2, new int[] {4}, new int[] {-2})).getMessage());
        assertEquals("blockStarts[0][2] = 2 must be above 2 and below the extent 9",
                assertThrows(IllegalArgumentException.class, () -> Distribution.irregular(4, new int[] {9}, new int[][] {{0, 2, 2}})).getMessage());
        assertEquals("the maps make 4 blocks for 3 ranks",
                assertThrows(IllegalArgumentException.class, () -> Distribution.irregular(3, new int[] {4, 4}, new int[][] {{0, 2}, {0, 2}})).getMessage());
        assertEquals("splits[1] = 3 is below splits[0] = 4: split points are cumulative",
                assertThrows(IllegalArgumentException.class, () -> Distribution.splitPoints(4, 3)).getMessage());
        assertEquals("the last split point is 0: the array needs at least one element",
                assertThrows(IllegalArgumentException.class, () -> Distribution.splitPoints(0, 0)).getMessage());
        Distribution d = Distribution.even(2, 4, 4);
        assertEquals("subscript [4, 0] is outside the array [4, 4] in dimension 0",
                assertThrows(IllegalArgumentException.class, () -> d.owner(4, 0)).getMessage());
        assertEquals("patch [1, 2]..[3, 1] is out of bounds of the array [4, 4] in dimension 1 (needs 0 <= lo <= hi < extent)",
                assertThrows(IllegalArgumentException.class, () -> d.owners(new int[] {1, 2}, new int[] {3, 1})).getMessage());
    }

    private static int linear(int[] i, int[] dims) {
        int l = 0;
        for (int k = 0; k < dims.length; k++) {
            l = l * dims[k] + i[k];
        }
        return l;
    }
}
