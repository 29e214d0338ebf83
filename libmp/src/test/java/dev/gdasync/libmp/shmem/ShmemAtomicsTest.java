package dev.gdasync.libmp.shmem;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** 64-bit atomics from every PE, own PE included (CPU atomics) against NIC atomics on the same words. */
@Timeout(300)
class ShmemAtomicsTest {
    private static final int K = 200;

    @TempDir
    Path base;

    /** n PEs × K fetch-adds on every PE's counter give n·K, and the fetched values are exactly 0 … n·K−1. */
    @Test
    void fetchAddsFromEveryPeGiveExactCountsAndEveryOldValueOnce() throws Exception {
        ShmemRanks.run(4, base, 1 << 20, shmem -> {
            int me = shmem.myPe();
            int n = shmem.nPes();
            MemorySegment counter = shmem.calloc(1, 8);
            MemorySegment incs = shmem.calloc(1, 8);
            MemorySegment fetched = shmem.calloc((long) n * n * K, 8);
            for (int i = 0; i < K; i++) {
                for (int t = 0; t < n; t++) {
                    int pe = (me + t) % n;
                    long old = i % 2 == 0 ? shmem.atomicFetchAdd(counter, 1, pe) : shmem.atomicFetchInc(counter, pe);
                    // Record it in the counter owner's table: row = who fetched, column = i.
                    shmem.pLong(fetched.asSlice(8L * ((long) pe * n * K + (long) me * K + i)), old, 0);
                    if (i % 3 == 0) {
                        shmem.atomicInc(incs, pe);
                    } else {
                        shmem.atomicAdd(incs, 2, pe);
                    }
                }
            }
            shmem.barrierAll();
            assertEquals((long) n * K, counter.get(JAVA_LONG, 0), "fetch-adds on PE " + me);
            long perPe = 0;
            for (int i = 0; i < K; i++) {
                perPe += i % 3 == 0 ? 1 : 2;
            }
            assertEquals(perPe * n, incs.get(JAVA_LONG, 0), "adds on PE " + me);
            assertEquals(perPe * n, shmem.atomicFetch(incs, (me + 1) % n));
            if (me == 0) {
                for (int owner = 0; owner < n; owner++) {
                    Set<Long> seen = new HashSet<>();
                    for (int j = 0; j < n * K; j++) {
                        seen.add(fetched.getAtIndex(JAVA_LONG, (long) owner * n * K + j));
                    }
                    assertEquals(n * K, seen.size(), "distinct old values of PE " + owner + "'s counter");
                    for (long v = 0; v < (long) n * K; v++) {
                        assertEquals(true, seen.contains(v), "PE " + owner + "'s counter never returned " + v);
                    }
                }
            }
            shmem.barrierAll();
        });
    }

    /**
     * Every PE swaps unique values into one word of PE 1 and takes a compare-and-swap lock around a plain read-modify-
     * write: the swapped-out values plus the final one are exactly the values swapped in plus the initial zero, and
     * the lock-protected count is exact.
     */
    @Test
    void swapsAndCompareSwapLocksAreExact() throws Exception {
        ShmemRanks.run(3, base, 1 << 20, shmem -> {
            int me = shmem.myPe();
            int n = shmem.nPes();
            int owner = 1;
            MemorySegment word = shmem.calloc(1, 8);
            MemorySegment lock = shmem.calloc(1, 8);
            MemorySegment guarded = shmem.calloc(1, 8);
            MemorySegment outs = shmem.calloc((long) n * K, 8);
            for (int i = 0; i < K; i++) {
                long mine = ((long) me + 1) << 32 | (i + 1);
                long old = shmem.atomicSwap(word, mine, owner);
                shmem.pLong(outs.asSlice(8L * ((long) me * K + i)), old, 0);
            }
            for (int i = 0; i < 50; i++) {
                while (shmem.atomicCompareSwap(lock, 0, me + 1, owner) != 0) {
                    Thread.onSpinWait();
                }
                long v = shmem.gLong(guarded, owner);
                shmem.pLong(guarded, v + 1, owner);
                shmem.quiet();
                assertEquals(me + 1, shmem.atomicCompareSwap(lock, me + 1, 0, owner), "the lock was ours");
            }
            shmem.barrierAll();
            if (me == owner) {
                assertEquals(50L * n, guarded.get(JAVA_LONG, 0));
            }
            if (me == 0) {
                Set<Long> returned = new HashSet<>();
                for (int j = 0; j < n * K; j++) {
                    returned.add(outs.getAtIndex(JAVA_LONG, j));
                }
                returned.add(shmem.atomicFetch(word, owner));
                Set<Long> swappedIn = new HashSet<>();
                swappedIn.add(0L);
                for (int p = 0; p < n; p++) {
                    for (int i = 0; i < K; i++) {
                        swappedIn.add(((long) p + 1) << 32 | (i + 1));
                    }
                }
                assertEquals(swappedIn, returned);
                shmem.atomicSet(word, 42, owner);
                assertEquals(42, shmem.atomicFetch(word, owner));
            }
            shmem.barrierAll();
        });
    }
}
