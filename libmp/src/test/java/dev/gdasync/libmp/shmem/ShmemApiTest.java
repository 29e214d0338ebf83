package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ptr, the wait/test array forms, 32-bit atomics and contexts. */
@Timeout(300)
class ShmemApiTest {
    @TempDir
    Path base;

    /** Over shared memory every PE's heap is mapped here: stores through ptr land in the owner's block. */
    @Test
    void ptrGivesEveryPesMemoryOverSharedMemory() throws Exception {
        ShmemRanks.run(3, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            int n = shmem.nPes();
            MemorySegment block = shmem.calloc(n, 8);
            assertEquals(block.address(), shmem.ptr(block, me).address(), "own PE: the block itself");
            for (int p = 0; p < n; p++) {
                MemorySegment there = shmem.ptr(block.asSlice(8L * me, 8), p);
                assertNotNull(there, "PE " + p + "'s heap is mapped here over shared memory");
                assertEquals(8, there.byteSize());
                there.set(JAVA_LONG, 0, 1000L * p + me);
            }
            shmem.barrierAll();
            for (int q = 0; q < n; q++) {
                assertEquals(1000L * me + q, block.getAtIndex(JAVA_LONG, q), "what PE " + q + " stored through ptr");
                assertEquals(1000L * q + me, shmem.ptr(block, q).getAtIndex(JAVA_LONG, me), "a load through ptr");
            }
            assertThrows(IllegalArgumentException.class, () -> shmem.ptr(block, n));
            assertThrows(IllegalArgumentException.class, () -> shmem.ptr(block.asSlice(8).reinterpret(n * 8L), 0));
            assertThrows(IllegalArgumentException.class, () -> shmem.ptr(MemorySegment.ofArray(new long[1]), 0));
            shmem.barrierAll();
        });
    }

    /**
     * PE 1 sets PE 0's words one at a time (index 2 left out by status and never set); PE 0 sees any, some and all in
     * turn, and the all-excluded and timeout cases end at once or with an error.
     */
    @Test
    void waitUntilAnySomeAllAndTheirTests() throws Exception {
        ShmemRanks.run(2, ShmemRanks.config(base, Duration.ofSeconds(3)), 1 << 16, shmem -> {
            int me = shmem.myPe();
            MemorySegment ivars = shmem.calloc(4, 8);
            MemorySegment go = shmem.calloc(1, 8);
            MemorySegment done = shmem.calloc(1, 8);
            int[] status = {0, 0, 1, 0};
            int[] idx = new int[4];
            if (me == 1) {
                shmem.waitUntil(go, ShmemCmp.EQ, 1);
                shmem.pLong(ivars.asSlice(24), 5, 0);
                shmem.quiet();
                shmem.pLong(done, 1, 0);
                shmem.waitUntil(go, ShmemCmp.EQ, 2);
                shmem.pLong(ivars, 6, 0);
                shmem.pLong(ivars.asSlice(8), 7, 0);
                shmem.quiet();
                shmem.pLong(done, 2, 0);
            } else {
                assertFalse(shmem.testAll(ivars, status, ShmemCmp.GE, 5));
                assertEquals(-1, shmem.testAny(ivars, status, ShmemCmp.GE, 5));
                shmem.pLong(go, 1, 1);
                assertEquals(3, shmem.waitUntilAny(ivars, status, ShmemCmp.GE, 5));
                shmem.waitUntil(done, ShmemCmp.EQ, 1);
                assertEquals(1, shmem.waitUntilSome(ivars, idx, status, ShmemCmp.GE, 5));
                assertEquals(3, idx[0]);
                assertEquals(3, shmem.testSome(ivars, idx, null, ShmemCmp.EQ, 0), "words 0, 1, 2 hold 0");
                shmem.pLong(go, 2, 1);
                shmem.waitUntilAll(ivars, status, ShmemCmp.GE, 5);
                shmem.waitUntil(done, ShmemCmp.EQ, 2);
                assertTrue(shmem.testAll(ivars, status, ShmemCmp.GE, 5));
                assertFalse(shmem.testAll(ivars, null, ShmemCmp.GE, 5), "word 2 was never set");
                assertEquals(3, shmem.testSome(ivars, idx, status, ShmemCmp.GT, 4));
                assertArrayEquals(new int[] {0, 1, 3}, java.util.Arrays.copyOf(idx, 3));
                assertEquals(0, shmem.testAny(ivars, status, ShmemCmp.NE, 0));
                int[] none = {1, 1, 1, 1};
                assertEquals(-1, shmem.waitUntilAny(ivars, none, ShmemCmp.EQ, 99), "every word left out");
                assertEquals(0, shmem.waitUntilSome(ivars, idx, none, ShmemCmp.EQ, 99));
                shmem.waitUntilAll(ivars, none, ShmemCmp.EQ, 99);
                MpException late = assertThrows(MpException.class,
                        () -> shmem.waitUntilAll(ivars, null, ShmemCmp.GE, 5));
                assertTrue(late.getMessage().contains("all of the 4 words") && late.getMessage().contains("hold 6 7 0 5"),
                        late.getMessage());
                assertThrows(IllegalArgumentException.class, () -> shmem.testAll(ivars, new int[3], ShmemCmp.EQ, 0));
                assertThrows(IllegalArgumentException.class, () -> shmem.testSome(ivars, new int[3], null, ShmemCmp.EQ, 0));
                assertThrows(IllegalArgumentException.class, () -> shmem.testAny(ivars.asSlice(4, 8), null, ShmemCmp.EQ, 0));
                assertThrows(IllegalArgumentException.class, () -> shmem.testAny(ivars.asSlice(0, 12), null, ShmemCmp.EQ, 0));
            }
            shmem.barrierAll();
        });
    }

    /**
     * Four PEs each own one half of the 64-bit words of every PE (PE p the half p % 2 of word p / 2): 150 fetch-adds
     * from each on each of its words give exact counts, every old value once, and never touch the other half, which
     * other PEs update at the same time. Then wrap-around, compare-swap, swap, set and fetch.
     */
    @Test
    void intAtomicsOnTheTwoHalvesOfAWordDoNotDisturbEachOther() throws Exception {
        int k = 150;
        ShmemRanks.run(4, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            int n = shmem.nPes();
            MemorySegment ints = shmem.calloc(n, 4);
            MemorySegment mine = ints.asSlice(4L * me, 4);
            List<Set<Integer>> fetched = new ArrayList<>();
            for (int t = 0; t < n; t++) {
                fetched.add(new HashSet<>());
            }
            for (int i = 0; i < k; i++) {
                for (int t = 0; t < n; t++) {
                    int pe = (me + t) % n;
                    int old = i % 2 == 0 ? shmem.atomicFetchAddInt(mine, 3, pe) : shmem.atomicFetchIncInt(mine, pe);
                    if (i % 2 == 1) {
                        shmem.atomicAddInt(mine, 2, pe);
                    }
                    assertTrue(fetched.get(pe).add(old), "old value " + old + " seen twice at PE " + pe);
                }
            }
            shmem.barrierAll();
            for (int q = 0; q < n; q++) {
                assertEquals(3 * k, ints.getAtIndex(JAVA_INT, q), "PE " + q + "'s int at PE " + me);
            }
            shmem.barrierAll();
            int peer = (me + 1) % n;
            MemorySegment theirs = ints.asSlice(4L * peer, 4);
            // PE me updates, at PE peer, the int PE peer owns by convention; nobody else touches it now.
            shmem.atomicSetInt(theirs, Integer.MAX_VALUE, peer);
            assertEquals(Integer.MAX_VALUE, shmem.atomicFetchAddInt(theirs, 1, peer));
            assertEquals(Integer.MIN_VALUE, shmem.atomicFetchInt(theirs, peer), "wraps like a Java int");
            assertEquals(Integer.MIN_VALUE, shmem.atomicCompareSwapInt(theirs, 5, 6, peer), "no swap");
            assertEquals(Integer.MIN_VALUE, shmem.atomicCompareSwapInt(theirs, Integer.MIN_VALUE, -7, peer));
            assertEquals(-7, shmem.atomicSwapInt(theirs, 42, peer));
            shmem.atomicIncInt(theirs, peer);
            shmem.barrierAll();
            for (int q = 0; q < n; q++) {
                assertEquals(q == me ? 43 : 3 * k, ints.getAtIndex(JAVA_INT, q), "int " + q + " at PE " + me);
            }
            assertThrows(IllegalArgumentException.class, () -> shmem.atomicFetchAddInt(ints.asSlice(2), 1, peer));
            assertThrows(IllegalArgumentException.class, () -> shmem.atomicSwapInt(ints.asSlice(4L * n), 1, peer));
            shmem.barrierAll();
        });
    }

    /** A context's quiet completes its operations only; destroyed contexts refuse; contexts fit the request pool. */
    @Test
    void contextsCompleteTheirOwnOperations() throws Exception {
        MpConfig small = ShmemRanks.config(base, Duration.ofSeconds(20)).withRequestPool(512);
        ShmemRanks.run(2, small, 1 << 16, shmem -> {
            int me = shmem.myPe();
            int peer = 1 - me;
            MemorySegment a = shmem.calloc(8, 8);
            MemorySegment b = shmem.calloc(8, 8);
            MemorySegment sig = shmem.calloc(1, 8);
            try (ShmemCtx ctx = shmem.ctxCreate()) {
                for (int i = 0; i < 3; i++) {
                    shmem.putNbi(a.asSlice(8L * i, 8), MemorySegment.ofArray(new long[] {10 + i}), peer);
                }
                ctx.putNbi(b, MemorySegment.ofArray(new long[] {20}), peer);
                ctx.pLong(b.asSlice(8), 21, peer);
                ctx.atomicAdd(b.asSlice(16), 5, peer);
                assertEquals(3, shmem.inFlight());
                assertEquals(3, ctx.inFlight());
                ctx.quiet();
                assertEquals(0, ctx.inFlight());
                assertEquals(3, shmem.inFlight(), "the default context's puts are not the context's to complete");
                ctx.putSignal(b.asSlice(24), MemorySegment.ofArray(new long[] {23}), sig, 1, ShmemSignalOp.ADD, peer);
                shmem.signalWaitUntil(sig, ShmemCmp.EQ, 1);
                assertEquals(23, b.getAtIndex(JAVA_LONG, 3));
                assertArrayEquals(new long[] {20, 21, 5}, new long[] {b.getAtIndex(JAVA_LONG, 0),
                        b.getAtIndex(JAVA_LONG, 1), b.getAtIndex(JAVA_LONG, 2)}, "the context's quiet completed them");
                // Both PEs checked their b before either changes the other's again.
                shmem.syncAll();
                assertEquals(5, ctx.atomicFetchAdd(b.asSlice(16), 1, peer));
                assertEquals(6, ctx.atomicCompareSwap(b.asSlice(16), 6, 60, peer));
                long[] back = new long[1];
                ctx.get(MemorySegment.ofArray(back), b.asSlice(8), peer);
                assertEquals(21, back[0]);
                ctx.fence();
            }
            shmem.barrierAll();
            assertArrayEquals(new long[] {10, 11, 12}, new long[] {a.getAtIndex(JAVA_LONG, 0), a.getAtIndex(JAVA_LONG, 1),
                    a.getAtIndex(JAVA_LONG, 2)});
            assertEquals(60, b.getAtIndex(JAVA_LONG, 2));
            ShmemCtx gone = shmem.ctxCreate();
            gone.close();
            gone.close();
            assertThrows(IllegalStateException.class, () -> gone.pLong(b, 1, peer));
            assertThrows(IllegalStateException.class, gone::quiet);
            // Pool 512: the default context holds up to 128, each context 64, all together at most 384.
            List<ShmemCtx> many = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                many.add(shmem.ctxCreate());
            }
            IllegalStateException full = assertThrows(IllegalStateException.class, shmem::ctxCreate);
            assertTrue(full.getMessage().contains("no room for another context"), full.getMessage());
            many.get(0).putNbi(a, MemorySegment.ofArray(new long[] {99}), peer);
            many.get(0).close();
            assertNotNull(shmem.ctxCreate(), "a destroyed context's room is free again");
            shmem.barrierAll();
            assertEquals(99, a.getAtIndex(JAVA_LONG, 0), "destroying a context completes its operations");
            // Closing the runtime destroys the contexts left open.
        });
    }
}
