package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.concurrent.AgentDuty;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.TrafficCounters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.gdasync.gdsync.swnic.NicPair.assertEmpty;
import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A send that finds no receive posted at the peer (receiver not ready) is retried by the thread that polls the
 * sender's completion queues, not only by the NIC's agent: with the sending NIC's agent held inside a duty cycle
 * of its own, so that it cannot retry anything, the stalled send still goes through as soon as the peer posts its
 * receive, sends behind it keep their order, and the receiver-not-ready timeout still fires. The agent, for its part,
 * retries a stalled send only when a retry may go through, not at every pass.
 */
class StalledSendRetryTest {
    @TempDir
    Path base;

    /** Holds the agent of a NIC in its duty cycle until closed: the agent can retry nothing meanwhile. */
    private static final class HeldAgent implements AgentDuty, AutoCloseable {
        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);

        static HeldAgent of(SoftwareNic nic) throws InterruptedException {
            HeldAgent h = new HeldAgent();
            nic.addAgentDuty(h);
            if (!h.entered.await(5, TimeUnit.SECONDS)) {
                fail("the agent did not start the duty within 5 s");
            }
            return h;
        }

        @Override
        public int doWork(long nowNanos) {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 0;
        }

        @Override
        public void close() {
            release.countDown();
        }
    }

    private NicPair pair(Duration rnrTimeout) {
        return new NicPair(NicPair.config(base).withRnrTimeout(rnrTimeout), QueuePairConfig.DEFAULT, 1 << 16, Access.ALL,
                Access.ALL);
    }

    @Test
    void theThreadPollingItsSendQueueDeliversAStalledSendWhileTheAgentCannot() throws Exception {
        try (NicPair p = pair(Duration.ofSeconds(30)); HeldAgent held = HeldAgent.of(p.swA())) {
            p.sa().set(JAVA_LONG, 0, 4242);
            p.qa.postSend(new SendWorkRequest().wrId(1).sge(p.ma, 0, 8));
            Thread.sleep(20);
            assertEmpty(p.qa.sendCq());
            p.qb.postRecv(new RecvWorkRequest().wrId(2).sge(p.mb, 64, 8));
            Completion sent = awaitOne(p.qa.sendCq());
            assertTrue(sent.isSuccess(), sent.toString());
            assertEquals(1, sent.wrId());
            assertEquals(2, awaitOne(p.qb.recvCq()).wrId());
            assertEquals(4242, p.sb().get(JAVA_LONG, 64));
            TrafficCounters a = p.qa.counters();
            assertEquals(0, a.doorbellsAgent(), "the agent was held, yet it ran work: " + a);
            assertTrue(a.rnrRetries() >= 1, "the send found no receive at first: " + a);
        }
    }

    @Test
    void sendsBehindAStalledOneGoThroughInOrderOneReceiveAtATime() throws Exception {
        try (NicPair p = pair(Duration.ofSeconds(30)); HeldAgent held = HeldAgent.of(p.swA())) {
            for (int i = 0; i < 3; i++) {
                p.sa().set(JAVA_LONG, 8L * i, 100 + i);
                p.qa.postSend(new SendWorkRequest().wrId(10 + i).sge(p.ma, 8L * i, 8));
            }
            for (int i = 0; i < 3; i++) {
                assertEmpty(p.qa.sendCq());
                p.qb.postRecv(new RecvWorkRequest().wrId(20 + i).sge(p.mb, 1024 + 8L * i, 8));
                Completion sent = awaitOne(p.qa.sendCq());
                assertTrue(sent.isSuccess(), sent.toString());
                assertEquals(10 + i, sent.wrId(), "sends completed out of order");
                Completion got = awaitOne(p.qb.recvCq());
                assertEquals(20 + i, got.wrId());
                assertEquals(100 + i, p.sb().get(JAVA_LONG, 1024 + 8L * i), "receive " + i + " got another send's bytes");
            }
            assertEmpty(p.qa.sendCq());
            assertEquals(0, p.qa.counters().doorbellsAgent(), p.qa.counters().toString());
        }
    }

    @Test
    void aPollOfTheReceiveQueueRetriesTheStalledSendToo() throws Exception {
        try (NicPair p = pair(Duration.ofSeconds(30)); HeldAgent held = HeldAgent.of(p.swA())) {
            p.qa.postSend(new SendWorkRequest().wrId(31).sge(p.ma, 0, 8));
            p.qb.postRecv(new RecvWorkRequest().wrId(32).sge(p.mb, 0, 8));
            // Side a waits for a reply, as a ping-pong's sender does: only its receive queue is polled.
            Completion c = new Completion();
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (p.qb.recvCq().poll(c) == 0) {
                assertEquals(0, p.qa.recvCq().poll(new Completion()), "no reply was sent");
                if (System.nanoTime() > deadline) {
                    fail("the stalled send did not go through within 5 s while its queue pair's receive queue was polled");
                }
            }
            assertEquals(32, c.wrId());
            assertTrue(awaitOne(p.qa.sendCq()).isSuccess());
        }
    }

    @Test
    void theReceiverNotReadyTimeoutStillFiresWhenOnlyThePollerRetries() throws Exception {
        try (NicPair p = pair(Duration.ofMillis(300)); HeldAgent held = HeldAgent.of(p.swA())) {
            long start = System.nanoTime();
            p.qa.postSend(new SendWorkRequest().wrId(41).sge(p.ma, 0, 8));
            Completion c = awaitOne(p.qa.sendCq());
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(CompletionStatus.RNR_RETRY_EXC_ERR, c.status(), c.toString());
            assertEquals(ErrorDetail.RNR_TIMEOUT, c.detail());
            assertEquals(41, c.wrId());
            assertTrue(ms >= 250, "failed after " + ms + " ms, before the 300 ms timeout");
            assertEquals(QpState.ERROR, p.qa.state());
        }
    }

    @Test
    void theAgentRetriesAStalledSendOnlyOnceTheReceiveIsPosted() throws Exception {
        try (NicPair p = pair(Duration.ofSeconds(30))) {
            p.qa.postSend(new SendWorkRequest().wrId(51).sge(p.ma, 0, 8));
            // Nobody polls side a: the agent alone retries, hot, for these 100 ms.
            Thread.sleep(100);
            assertEquals(1, p.qa.counters().rnrRetries(),
                    "the agent executed the send again while no receive was posted: " + p.qa.counters());
            p.qb.postRecv(new RecvWorkRequest().wrId(52).sge(p.mb, 0, 8));
            assertEquals(52, awaitOne(p.qb.recvCq()).wrId());
            assertTrue(awaitOne(p.qa.sendCq()).isSuccess());
            assertEquals(1, p.qa.counters().rnrRetries(), p.qa.counters().toString());
        }
    }
}
