package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.libmp.MpException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad input gives a precise error and changes nothing; a failed job or a silent peer ends waits with an error. */
@Timeout(300)
class ShmemErrorsTest {
    @TempDir
    Path base;

    @Test
    void badAddressesPesAndAlignmentAreRefusedAndChangeNothing() throws Exception {
        ShmemRanks.run(2, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            int peer = 1 - me;
            MemorySegment block = shmem.malloc(64);
            MemorySegment guard = shmem.malloc(64);
            for (int k = 0; k < 8; k++) {
                block.setAtIndex(JAVA_LONG, k, 100 + k);
                guard.setAtIndex(JAVA_LONG, k, 200 + k);
            }
            MemorySegment freed = shmem.malloc(64);
            shmem.free(freed);
            shmem.barrierAll();
            MemorySegment data = MemorySegment.ofArray(new long[9]);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment outside = arena.allocate(64, 8);
                refused(() -> shmem.put(outside, data.asSlice(0, 8), peer), "is not in the symmetric heap");
                refused(() -> shmem.get(outside, outside, peer), "source 0x");
                refused(() -> shmem.atomicFetchAdd(outside, 1, peer), "is not in the symmetric heap");
            }
            refused(() -> shmem.put(block, data.asSlice(0, 8), -1), "PE -1 is out of range: PEs are 0..1");
            refused(() -> shmem.pLong(block, 1, 2), "PE 2 is out of range: PEs are 0..1");
            refused(() -> shmem.put(block, data, peer), "72 bytes at heap offset");
            refused(() -> shmem.getNbi(MemorySegment.ofArray(new byte[65]), block, peer), "not inside one live block");
            refused(() -> shmem.put(freed, data.asSlice(0, 8), peer), "not inside one live block");
            refused(() -> shmem.gLong(freed, peer), "not inside one live block");
            refused(() -> shmem.atomicFetchAdd(block.asSlice(4), 1, peer), "is not 8-byte aligned");
            refused(() -> shmem.atomicCompareSwap(block.asSlice(60), 0, 1, me), "is not 8-byte aligned");
            refused(() -> shmem.atomicAdd(guard.asSlice(64), 1, peer), "8 bytes at heap offset");
            refused(() -> shmem.waitUntil(block.asSlice(1), ShmemCmp.EQ, 0), "is not 8-byte aligned");
            refused(() -> shmem.pInt(block.asSlice(2), 1, peer), "is not 4-byte aligned");
            refused(() -> shmem.put(block.asSlice(4), new long[1], peer), "is not 8-byte aligned");
            shmem.barrierAll();
            for (int k = 0; k < 8; k++) {
                assertEquals(100 + k, block.getAtIndex(JAVA_LONG, k), "block word " + k + " of PE " + me);
                assertEquals(200 + k, guard.getAtIndex(JAVA_LONG, k), "guard word " + k + " of PE " + me);
            }
            // The allocator is untouched too: the next block takes the freed one's place.
            MemorySegment again = shmem.malloc(64);
            assertEquals(freed.address(), again.address());
        });
    }

    @Test
    void collectiveCallsThatDisagreeFailOnEveryPeAndAllocateNothing() throws Exception {
        ShmemRanks.run(3, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            MemorySegment first = shmem.malloc(100);
            MemorySegment probe = shmem.malloc(64);
            shmem.free(probe);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> shmem.malloc(me == 2 ? 128 : 64));
            assertTrue(e.getMessage().contains("collective malloc #") && e.getMessage().contains("called malloc #")
                    && e.getMessage().contains("128 bytes") && e.getMessage().contains("nothing was changed"), e.getMessage());
            IllegalArgumentException f = assertThrows(IllegalArgumentException.class,
                    () -> shmem.free(me == 0 ? first.asSlice(0, 50) : first));
            assertTrue(f.getMessage().contains("collective free #") && f.getMessage().contains("no live block"), f.getMessage());
            IllegalArgumentException g = assertThrows(IllegalArgumentException.class, () -> shmem.calloc(me == 1 ? 0 : 1, 8));
            assertTrue(g.getMessage().contains("collective"), g.getMessage());
            IllegalStateException full = assertThrows(IllegalStateException.class, () -> shmem.malloc(1 << 16));
            assertTrue(full.getMessage().contains("has no free range of 65536 bytes"), full.getMessage());
            // Nothing was allocated or freed by the failed calls: the same offsets come back, and first is still live.
            MemorySegment next = shmem.malloc(64);
            assertEquals(probe.address(), next.address());
            shmem.pLong(first, 7 + me, (me + 1) % shmem.nPes());
            shmem.barrierAll();
            assertEquals(7 + (me + 2) % 3, first.get(JAVA_LONG, 0));
            shmem.free(first);
        });
    }

    /** PE 1 aborts the job while PE 0 waits for a word only PE 1 would write: the wait ends with the cause. */
    @Test
    void aFailedPeEndsWaitsAndRefusesLaterOperations() throws Exception {
        CountDownLatch waiting = new CountDownLatch(1);
        ShmemRanks.run(2, base, 1 << 16, shmem -> {
            MemorySegment flag = shmem.calloc(1, 8);
            if (shmem.myPe() == 0) {
                Thread.ofPlatform().start(() -> {
                    // Let PE 0 enter the wait first; the test does not depend on it.
                    sleep(200);
                    waiting.countDown();
                });
                MpException e = assertThrows(MpException.class, () -> shmem.waitUntil(flag, ShmemCmp.EQ, 1));
                assertEquals(ErrorDetail.JOB_FAILED, e.detail());
                assertTrue(e.getMessage().contains("rank 1 aborted the job: PE 1 is gone")
                        && e.getMessage().contains("EQ 1 (it holds 0)"), e.getMessage());
                MpException later = assertThrows(MpException.class, () -> shmem.putNbi(flag, MemorySegment.ofArray(new long[1]), 1));
                assertEquals(ErrorDetail.JOB_FAILED, later.detail());
                assertThrows(MpException.class, () -> shmem.atomicFetchAdd(flag, 1, 1));
            } else {
                await(waiting);
                shmem.mp().abort("PE 1 is gone");
            }
        });
    }

    /** Nobody writes the word: the wait fails after the Mp's wait timeout, naming the word and what it holds. */
    @Test
    void aWaitNobodyEndsFailsAfterTheTimeout() throws Exception {
        ShmemRanks.run(2, ShmemRanks.config(base, Duration.ofMillis(500)), 1 << 16, shmem -> {
            MemorySegment flag = shmem.calloc(2, 8);
            flag.set(JAVA_LONG, 8, 5);
            if (shmem.myPe() == 1) {
                MpException e = assertThrows(MpException.class,
                        () -> shmem.waitUntil(flag.asSlice(8), ShmemCmp.GT, 5));
                assertTrue(e.getMessage().contains("GT 5 (it holds 5)"), e.getMessage());
                assertTrue(shmem.test(flag.asSlice(8), ShmemCmp.LE, 5));
            }
            shmem.barrierAll();
        });
    }

    private static void refused(Executable call, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(message), "expected \"" + message + "\" in: " + e.getMessage());
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(60, TimeUnit.SECONDS), "the other PE did not get ready");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
