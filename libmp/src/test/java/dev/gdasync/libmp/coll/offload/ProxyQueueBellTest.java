package dev.gdasync.libmp.coll.offload;

import dev.gdasync.gdsync.concurrent.Futex;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The helpers' bell of the proxy's queue: a ring moves it, a helper sleeping on it wakes at the ring (long before its
 * timeout), a helper that read the bell before a ring does not sleep through it, and the count of sleepers is back to
 * zero after each sleep.
 */
class ProxyQueueBellTest {
    @Test
    void aRingWakesASleepingHelperAndASleepAfterARingEndsAtOnce() throws Exception {
        assumeTrue(Futex.isSupported(), "futex system call not available here: a helper's sleep is a plain park");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment file = arena.allocate(ProxyQueue.bytes(2, 1), 4096);
            ProxyQueue queue = new ProxyQueue(file, 2, 1);

            // Nothing rang: the sleep runs out and says so.
            assertFalse(queue.sleepOnBell(queue.bell(), 1_000_000L));

            // A helper asleep for up to 60 s is woken by a rank's ring.
            AtomicBoolean rang = new AtomicBoolean();
            int seen = queue.bell();
            Thread helper = Thread.ofPlatform().start(() -> rang.set(queue.sleepOnBell(seen, 60_000_000_000L)));
            while (file.get(ValueLayout.JAVA_INT, ProxyQueue.H_SLEEPERS) == 0 && helper.isAlive()) {
                Thread.onSpinWait();
            }
            queue.ringHelpers();
            helper.join(20_000);
            assertFalse(helper.isAlive(), "the ring did not wake the sleeping helper");
            assertTrue(rang.get());
            assertEquals(seen + 1, queue.bell());
            assertEquals(0, file.get(ValueLayout.JAVA_INT, ProxyQueue.H_SLEEPERS), "a helper still counted asleep");

            // A helper that read the bell before a ring (its last look missed the post) does not sleep at all.
            int before = queue.bell();
            queue.ringHelpers();
            long start = System.nanoTime();
            assertTrue(queue.sleepOnBell(before, 60_000_000_000L));
            assertTrue(System.nanoTime() - start < 20_000_000_000L, "slept through a ring made before the sleep");
        }
    }
}
