package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.testutil.FuzzSeeds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The symmetric heap's allocator against a model: random sequences of malloc, calloc, free and realloc (a new block,
 * then the old one freed) on two independent heaps in lockstep. After every step: live blocks never overlap, lie in
 * the heap and start on {@link SymmetricHeap#ALIGNMENT}; the offset is exactly the model's first fit (the lowest gap
 * between live blocks that holds the rounded length), and a refusal happens exactly when no gap does; free ranges are
 * coalesced and, with the live blocks, cover the heap exactly; both heaps return the same offsets (what makes the heap
 * symmetric across PEs). {@value #SEQUENCES} sequences by default; see {@link FuzzSeeds} to run more.
 */
class SymmetricHeapTest {
    private static final int SEQUENCES = 2000;
    private static final int STEPS = 300;
    private static final long A = SymmetricHeap.ALIGNMENT;

    static LongStream seeds() {
        return FuzzSeeds.seeds(SEQUENCES);
    }

    /** The sequence of issue 31: before the fix the last block was the live fourth one. */
    @Test
    void freedBlocksAreReusedWithoutOverlappingLiveOnes() {
        long h = 3 * A;
        SymmetricHeap heap = new SymmetricHeap(h, h + (1 << 16));
        long b1 = heap.allocate(64);
        long b2 = heap.allocate(64);
        long b3 = heap.allocate(128);
        long b4 = heap.allocate(64);
        assertEquals(List.of(h, h + 64, h + 128, h + 256), List.of(b1, b2, b3, b4));
        heap.release(b1);
        heap.release(b3);
        long c1 = heap.allocate(100);
        long c2 = heap.allocate(64);
        long c3 = heap.allocate(64);
        // First fit: 100 bytes (128 rounded) take the third block's place, then the first's, then the range after b4.
        assertEquals(List.of(h + 128, h, h + 320), List.of(c1, c2, c3));
        assertEquals(5, heap.liveBlocks());
        assertEquals(Map.of(h + 384, (1L << 16) - 384), heap.freeRanges());
    }

    @Test
    void freeingCoalescesWithBothNeighbours() {
        SymmetricHeap heap = new SymmetricHeap(0, 4 * A);
        long a = heap.allocate(A);
        long b = heap.allocate(A);
        long c = heap.allocate(A);
        heap.release(a);
        heap.release(c);
        assertEquals(Map.of(0L, A, 2 * A, 2 * A), heap.freeRanges());
        heap.release(b);
        assertEquals(Map.of(0L, 4 * A), heap.freeRanges());
        assertEquals(0, heap.allocate(4 * A), "the whole heap is one range again");
    }

    @Test
    void refusesWhatCannotFitAndBlocksThatAreNotLive() {
        SymmetricHeap heap = new SymmetricHeap(A, A + 100);
        assertEquals(-1, heap.allocate(0));
        assertEquals(-1, heap.allocate(101));
        assertEquals(-1, heap.allocate(100), "a block takes whole 64-byte units: 128 do not fit in 100");
        assertEquals(A, heap.allocate(64));
        assertEquals(-1, heap.allocate(1), "36 bytes are left, less than one unit");
        assertThrows(IllegalArgumentException.class, () -> heap.release(2 * A));
        assertThrows(IllegalArgumentException.class, () -> heap.release(A + 8));
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void randomSequencesMatchTheFirstFitModel(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long base = A * random.nextInt(0, 4);
        long size = switch (random.nextInt(3)) {
            case 0 -> A * random.nextInt(1, 16);
            case 1 -> random.nextLong(1, 2048);
            default -> A * random.nextInt(16, 256) + random.nextInt(0, (int) A);
        };
        SymmetricHeap pe0 = new SymmetricHeap(base, base + size);
        SymmetricHeap pe1 = new SymmetricHeap(base, base + size);
        Model model = new Model(base, base + size);
        List<String> log = new ArrayList<>();
        try {
            for (int step = 0; step < STEPS; step++) {
                int op = random.nextInt(10);
                if (op < 4 || model.live.isEmpty()) {
                    long bytes = length(random, size);
                    log.add("malloc " + bytes);
                    allocate(pe0, pe1, model, bytes);
                } else if (op < 5) {
                    long count = random.nextLong(1, 9);
                    long each = Math.max(1, length(random, size) / count);
                    log.add("calloc " + count + " x " + each);
                    allocate(pe0, pe1, model, count * each);
                } else if (op < 8) {
                    long at = model.pick(random);
                    log.add("free " + at);
                    release(pe0, pe1, model, at);
                } else {
                    long at = model.pick(random);
                    long bytes = length(random, size);
                    log.add("realloc " + at + " to " + bytes);
                    if (allocate(pe0, pe1, model, bytes) >= 0) {
                        release(pe0, pe1, model, at);
                    }
                }
                model.check(pe0);
            }
        } catch (AssertionError e) {
            fail("seed=" + seed + " (heap [" + base + ", " + (base + size) + ")), after " + log.size()
                    + " steps, the last: " + log.subList(Math.max(0, log.size() - 12), log.size()) + ": "
                    + e.getMessage(), e);
        }
    }

    /** Mostly small lengths, some of a whole unit, a few near the heap's size (which may not fit). */
    private static long length(SplittableRandom random, long size) {
        return switch (random.nextInt(8)) {
            case 0 -> A * random.nextInt(1, 4);
            case 1 -> random.nextLong(1, size + A + 1);
            default -> random.nextLong(1, 200);
        };
    }

    private static long allocate(SymmetricHeap pe0, SymmetricHeap pe1, Model model, long bytes) {
        long expected = model.firstFit(bytes);
        long at0 = pe0.allocate(bytes);
        long at1 = pe1.allocate(bytes);
        assertEquals(at0, at1, "two heaps fed the same calls gave different offsets for " + bytes + " bytes");
        assertEquals(expected, at0, "offset of " + bytes + " bytes (model's first fit; -1 = no gap)");
        if (at0 >= 0) {
            assertEquals(bytes, pe0.liveLength(at0));
            model.live.put(at0, bytes);
        }
        return at0;
    }

    private static void release(SymmetricHeap pe0, SymmetricHeap pe1, Model model, long at) {
        assertEquals(model.live.get(at), pe0.liveLength(at), "length of the block at " + at);
        pe0.release(at);
        pe1.release(at);
        model.live.remove(at);
        assertEquals(-1, pe0.liveLength(at));
    }

    private static long roundUp(long bytes) {
        return (bytes + A - 1) / A * A;
    }

    /** Live blocks only; the free ranges are whatever lies between them. */
    private static final class Model {
        final long base;
        final long limit;
        final TreeMap<Long, Long> live = new TreeMap<>();

        Model(long base, long limit) {
            this.base = base;
            this.limit = limit;
        }

        /** @return the lowest offset whose gap to the next live block (or the limit) holds the rounded length */
        long firstFit(long bytes) {
            long need = roundUp(bytes);
            long at = base;
            for (Map.Entry<Long, Long> e : live.entrySet()) {
                if (e.getKey() - at >= need) {
                    return at;
                }
                at = e.getKey() + roundUp(e.getValue());
            }
            return limit - at >= need ? at : -1;
        }

        long pick(SplittableRandom random) {
            List<Long> offsets = new ArrayList<>(live.keySet());
            return offsets.get(random.nextInt(offsets.size()));
        }

        void check(SymmetricHeap heap) {
            assertEquals(live.size(), heap.liveBlocks(), "live blocks");
            long end = base;
            for (Map.Entry<Long, Long> e : live.entrySet()) {
                long at = e.getKey();
                assertEquals(0, at % A, "block at " + at + " is not " + A + "-byte aligned");
                assertTrue(at >= end, "block at " + at + " overlaps the block before it, which ends at " + end);
                end = at + roundUp(e.getValue());
                assertTrue(end <= limit, "block at " + at + " of " + e.getValue() + " bytes ends past the heap's "
                        + "limit " + limit);
                assertEquals(at, heap.blockHolding(at, e.getValue()), "the heap does not hold the block at " + at);
            }
            // Free ranges and live blocks (rounded) cover [base, limit) exactly; no two free ranges touch.
            TreeMap<Long, Long> covered = new TreeMap<>();
            live.forEach((at, bytes) -> covered.put(at, roundUp(bytes)));
            long previousFreeEnd = -1;
            for (Map.Entry<Long, Long> f : heap.freeRanges().entrySet()) {
                assertTrue(f.getValue() > 0, "empty free range at " + f.getKey());
                assertTrue(f.getKey() != previousFreeEnd, "free ranges touch at " + f.getKey() + ": not coalesced");
                previousFreeEnd = f.getKey() + f.getValue();
                assertEquals(null, covered.put(f.getKey(), f.getValue()), "a free range starts at live block "
                        + f.getKey());
            }
            long at = base;
            for (Map.Entry<Long, Long> c : covered.entrySet()) {
                assertEquals(at, c.getKey(), "gap or overlap between the heap's ranges");
                at = c.getKey() + c.getValue();
            }
            assertEquals(limit, at, "where the heap's ranges end");
        }
    }
}
