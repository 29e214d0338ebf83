package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.testutil.FuzzSeeds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The symmetric heap through the public API on PEs that are threads: blocks never overlap and every PE uses the same
 * offsets (each PE writes into its peer's copy of a block, which lands in the peer's block only if the offsets
 * agree); atomics on segments shorter than their word are refused before anything is sent; a calloc that PEs
 * disagree on is named as a calloc.
 */
@Timeout(300)
class ShmemHeapTest {
    /** Random collective sequences on thread PEs; each costs two barriers a step, so few by default. */
    private static final int SEQUENCES = 2;
    private static final int STEPS = 120;

    @TempDir
    Path base;

    /** Issue 31's sequence: the last block used to be the live fourth block's memory. */
    @Test
    void reusedBlocksDoNotOverlapLiveOnes() throws Exception {
        ShmemRanks.run(2, base, 1 << 16, shmem -> {
            int peer = 1 - shmem.myPe();
            MemorySegment b1 = shmem.malloc(64);
            MemorySegment b2 = shmem.malloc(64);
            MemorySegment b3 = shmem.malloc(128);
            MemorySegment b4 = shmem.malloc(64);
            shmem.free(b1);
            shmem.free(b3);
            MemorySegment c1 = shmem.malloc(100);
            MemorySegment c2 = shmem.malloc(64);
            MemorySegment c3 = shmem.malloc(64);
            long h = b1.address();
            assertEquals(List.of(h + 128, h, h + 320), List.of(c1.address(), c2.address(), c3.address()));
            List<MemorySegment> live = List.of(b2, b4, c1, c2, c3);
            assertDisjoint(live);
            // Each PE tags its peer's copy of every live block; with shared offsets each block holds its own tag.
            for (int i = 0; i < live.size(); i++) {
                fillRemote(shmem, live.get(i), 1000L * peer + i, peer);
            }
            shmem.barrierAll();
            for (int i = 0; i < live.size(); i++) {
                assertFilled(live.get(i), 1000L * shmem.myPe() + i, "block " + i);
            }
            shmem.barrierAll();
        });
    }

    /**
     * Random malloc, calloc and free on 2 PEs, a fixed seed per sequence: after every step each live block holds the
     * tag its peer wrote into it, no two live blocks overlap, and calloc's blocks are zero.
     */
    @Test
    void randomCollectiveSequencesKeepBlocksApartAndSymmetric() throws Exception {
        for (long seed : FuzzSeeds.seeds(SEQUENCES).toArray()) {
            try {
                ShmemRanks.run(2, base, 1 << 14, shmem -> randomSequence(shmem, seed));
            } catch (AssertionError | Exception e) {
                fail("seed=" + seed + ": " + e.getMessage(), e);
            }
        }
    }

    private static void randomSequence(Shmem shmem, long seed) {
        // The same seed on every PE: the same collective calls in the same order.
        SplittableRandom random = new SplittableRandom(seed);
        int me = shmem.myPe();
        int peer = 1 - me;
        List<MemorySegment> live = new ArrayList<>();
        List<Long> tags = new ArrayList<>();
        long nextTag = 1;
        for (int step = 0; step < STEPS; step++) {
            int op = random.nextInt(10);
            if (op < 6 || live.isEmpty()) {
                long bytes = random.nextInt(4) == 0 ? random.nextLong(1, 4096) : random.nextLong(8, 300);
                bytes = Math.max(8, bytes & -8L);
                MemorySegment m;
                try {
                    if (op < 3) {
                        m = shmem.calloc(bytes / 8, 8);
                        assertFilled(m, 0, "calloc's block at step " + step);
                        // The peer writes into it next: not before this PE has looked.
                        shmem.barrierAll();
                    } else {
                        m = shmem.malloc(bytes);
                    }
                } catch (IllegalStateException full) {
                    // The heap is full on every PE alike: free one and go on.
                    int i = random.nextInt(live.size());
                    shmem.free(live.remove(i));
                    tags.remove(i);
                    continue;
                }
                long tag = (nextTag++ << 1) | me;
                fillRemote(shmem, m, (tag & ~1L) | peer, peer);
                live.add(m);
                tags.add(tag);
            } else {
                int i = random.nextInt(live.size());
                shmem.free(live.remove(i));
                tags.remove(i);
            }
            shmem.barrierAll();
            assertDisjoint(live);
            for (int i = 0; i < live.size(); i++) {
                assertFilled(live.get(i), tags.get(i), "block " + i + " at step " + step);
            }
            shmem.barrierAll();
        }
        for (MemorySegment m : live) {
            shmem.free(m);
        }
    }

    @Test
    void atomicsOnSegmentsShorterThanTheirWordAreRefusedAndChangeNothing() throws Exception {
        ShmemRanks.run(2, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            int peer = 1 - me;
            MemorySegment block = shmem.malloc(64);
            for (int k = 0; k < 8; k++) {
                block.setAtIndex(JAVA_LONG, k, 100 + k);
            }
            shmem.barrierAll();
            MemorySegment half = block.asSlice(8, 4);
            String word64 = "is shorter than the 8 bytes of a 64-bit word";
            for (int pe : new int[] {peer, me}) {
                refused(() -> shmem.atomicFetchAdd(half, 1, pe), word64);
                refused(() -> shmem.atomicAdd(half, 1, pe), word64);
                refused(() -> shmem.atomicInc(half, pe), word64);
                refused(() -> shmem.atomicFetchInc(half, pe), word64);
                refused(() -> shmem.atomicFetch(half, pe), word64);
                refused(() -> shmem.atomicCompareSwap(half, 108, 1, pe), word64);
                refused(() -> shmem.atomicSwap(half, 1, pe), word64);
                refused(() -> shmem.atomicSet(half, 1, pe), word64);
                refused(() -> shmem.atomicFetchAddInt(block.asSlice(16, 2), 1, pe),
                        "is shorter than the 4 bytes of a 32-bit word");
                refused(() -> shmem.atomicSetInt(block.asSlice(16, 0), 1, pe), "4 bytes of a 32-bit word");
                refused(() -> shmem.putSignal(block.asSlice(32, 8), MemorySegment.ofArray(new long[] {9}), half, 1,
                        ShmemSignalOp.ADD, pe), word64);
            }
            refused(() -> shmem.waitUntil(half, ShmemCmp.EQ, 0), word64);
            refused(() -> shmem.signalFetch(half), word64);
            try (ShmemCtx ctx = shmem.ctxCreate()) {
                refused(() -> ctx.atomicFetchAdd(half, 1, peer), word64);
                refused(() -> ctx.atomicAdd(half, 1, peer), word64);
                refused(() -> ctx.atomicCompareSwap(half, 108, 1, peer), word64);
            }
            shmem.barrierAll();
            for (int k = 0; k < 8; k++) {
                assertEquals(100 + k, block.getAtIndex(JAVA_LONG, k), "word " + k + " of PE " + me);
            }
            shmem.barrierAll();
            // A segment of 8 bytes or more is a word: the first 8 bytes.
            assertEquals(101, shmem.atomicFetchAdd(block.asSlice(8, 16), 1, peer));
            shmem.barrierAll();
            assertEquals(102, block.getAtIndex(JAVA_LONG, 1));
            shmem.barrierAll();
        });
    }

    @Test
    void aCallocThatPesDisagreeOnIsNamedAsCalloc() throws Exception {
        ShmemRanks.run(3, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            MemorySegment probe = shmem.malloc(64);
            shmem.free(probe);
            IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                    () -> shmem.calloc(me == 2 ? 3 : 2, 8));
            assertTrue(count.getMessage().startsWith("collective calloc #")
                    && count.getMessage().contains("called calloc #")
                    && count.getMessage().contains((me == 2 ? 2 : 3) + " elements of 8 bytes")
                    && !count.getMessage().contains("malloc"), count.getMessage());
            IllegalArgumentException kind = assertThrows(IllegalArgumentException.class,
                    () -> {
                        if (me == 1) {
                            shmem.malloc(16);
                        } else {
                            shmem.calloc(2, 8);
                        }
                    });
            String expected = me == 1 ? "called calloc #" : "called malloc #";
            assertTrue(kind.getMessage().contains(expected) && kind.getMessage().contains("nothing was changed"),
                    kind.getMessage());
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> shmem.calloc(0, 8));
            assertTrue(bad.getMessage().contains("count and size must be >= 1"), bad.getMessage());
            // Nothing was allocated by the failed calls.
            MemorySegment next = shmem.calloc(8, 8);
            assertEquals(probe.address(), next.address());
        });
    }

    /** Writes {@code tag} into every 8-byte word of the peer's copy of {@code block}. */
    private static void fillRemote(Shmem shmem, MemorySegment block, long tag, int pe) {
        long[] words = new long[(int) (block.byteSize() / 8)];
        java.util.Arrays.fill(words, tag);
        shmem.put(block, words, pe);
    }

    private static void assertFilled(MemorySegment block, long tag, String what) {
        for (long k = 0; k < block.byteSize() / 8; k++) {
            long v = block.getAtIndex(JAVA_LONG, k);
            if (v != tag) {
                fail(what + " at 0x" + Long.toHexString(block.address()) + ": word " + k + " holds " + v
                        + ", expected " + tag + " (another block overlaps it, or the PEs' offsets differ)");
            }
        }
    }

    private static void assertDisjoint(List<MemorySegment> blocks) {
        List<MemorySegment> sorted = new ArrayList<>(blocks);
        sorted.sort((a, b) -> Long.compare(a.address(), b.address()));
        for (int i = 1; i < sorted.size(); i++) {
            MemorySegment a = sorted.get(i - 1);
            MemorySegment b = sorted.get(i);
            assertTrue(a.address() + a.byteSize() <= b.address(), "blocks overlap: 0x" + Long.toHexString(a.address())
                    + " (" + a.byteSize() + " bytes) and 0x" + Long.toHexString(b.address()));
        }
    }

    private static void refused(Executable call, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(message), "expected \"" + message + "\" in: " + e.getMessage());
    }
}
