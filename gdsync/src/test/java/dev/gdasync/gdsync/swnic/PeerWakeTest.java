package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.concurrent.Futex;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A thread parked in {@code Nic.awaitPeers} waiting for a receive is woken by the peer's send, not by the end of
 * its park, and one waiting for memory the peer stores into (mapped there) by the peer's {@code wakePeer}; and a park
 * whose wait is already over does not sleep.
 */
class PeerWakeTest {
    @TempDir
    Path base;

    @Test
    void aParkedReceiverIsWokenByThePeersSend() throws Exception {
        if (!Futex.isSupported()) {
            System.out.println("PeerWakeTest: skipped: no futex call here");
        }
        Assumptions.assumeTrue(Futex.isSupported(), "no futex call here");
        try (NicPair p = new NicPair(NicPair.config(base), QueuePairConfig.DEFAULT, 1 << 16, Access.ALL, Access.ALL)) {
            p.qa.postRecv(new RecvWorkRequest().wrId(7).sge(p.ma, 0, 8));
            Completion c = new Completion();
            AtomicInteger got = new AtomicInteger();
            CountDownLatch parking = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(1);
            Thread receiver = Thread.ofPlatform().start(() -> {
                parking.countDown();
                // One minute parks: only a wake ends them before the test's limit.
                while (got.get() == 0) {
                    p.a.awaitPeers(Duration.ofSeconds(60).toNanos(), () -> {
                        if (p.qa.recvCq().poll(c) == 1) {
                            got.set(1);
                        }
                        return got.get() == 1;
                    });
                }
                done.countDown();
            });
            assertTrue(parking.await(5, TimeUnit.SECONDS));
            Thread.sleep(50);
            p.sb().set(JAVA_LONG, 0, 99);
            p.qb.postSend(new SendWorkRequest().wrId(8).sge(p.mb, 0, 8));
            assertTrue(done.await(20, TimeUnit.SECONDS), "the receiver's one-minute park was not ended by the send");
            receiver.join();
            assertEquals(7, c.wrId());
            assertEquals(99, p.sa().get(JAVA_LONG, 0));
        }
    }

    @Test
    void aParkedThreadIsWokenByAStoreIntoItsMappedMemoryAndTheQueuePairsWakePeer() throws Exception {
        if (!Futex.isSupported()) {
            System.out.println("PeerWakeTest: skipped: no futex call here");
        }
        Assumptions.assumeTrue(Futex.isSupported(), "no futex call here");
        try (NicPair p = new NicPair(NicPair.config(base), QueuePairConfig.DEFAULT, 1 << 16, Access.ALL, Access.ALL)) {
            MemorySegment theirs = p.qb.peerMemory(p.ma.rkey(), p.sa().address(), 8);
            assertTrue(theirs != null, "the shared-memory NIC maps the peer's registered memory");
            CountDownLatch parking = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(1);
            Thread waiter = Thread.ofPlatform().start(() -> {
                parking.countDown();
                // One minute parks: only a wake ends them before the test's limit.
                while (p.sa().get(JAVA_LONG, 0) != 42) {
                    p.a.awaitPeers(Duration.ofSeconds(60).toNanos(), () -> p.sa().get(JAVA_LONG, 0) == 42);
                }
                done.countDown();
            });
            assertTrue(parking.await(5, TimeUnit.SECONDS));
            Thread.sleep(50);
            theirs.set(JAVA_LONG, 0, 42);
            p.qb.wakePeer();
            assertTrue(done.await(20, TimeUnit.SECONDS), "the waiter's one-minute park was not ended by wakePeer");
            waiter.join();
        }
    }

    @Test
    void aParkWhoseWaitIsOverReturnsWithoutSleeping() throws Exception {
        try (NicPair p = new NicPair(NicPair.config(base), QueuePairConfig.DEFAULT, 1 << 16, Access.ALL, Access.ALL)) {
            AtomicInteger asked = new AtomicInteger();
            long start = System.nanoTime();
            p.a.awaitPeers(Duration.ofSeconds(60).toNanos(), () -> asked.incrementAndGet() > 0);
            assertEquals(1, asked.get());
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(30).toNanos(), "it slept although the wait was over");
        }
    }
}
