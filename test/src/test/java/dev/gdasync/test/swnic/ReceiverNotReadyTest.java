package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.Payloads;
import dev.gdasync.test.harness.Peer;
import dev.gdasync.test.harness.Peer.Cq;
import dev.gdasync.test.harness.Peer.Sge;
import dev.gdasync.test.harness.Peer.Wr;
import dev.gdasync.test.harness.RemotePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static dev.gdasync.test.harness.Checks.NO_HANG;
import static dev.gdasync.test.harness.Checks.assertBytes;
import static dev.gdasync.test.harness.Checks.assertPattern;
import static dev.gdasync.test.harness.Checks.awaitCqe;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.expectSuccess;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Receiver not ready: a SEND to a process that posted no receive waits for one for the sender's
 * configured rnrTimeout, then completes with RNR_RETRY_EXC_ERR; a receive posted within the timeout
 * lets it succeed instead. The only timing assertion is the lower bound (the error must not come much
 * before the timeout) and a generous upper bound.
 */
@Timeout(120)
class ReceiverNotReadyTest {
    private static final QueuePairConfig FOUR = new QueuePairConfig(4, 4, 8);

    @TempDir
    Path base;

    @Test
    void aSendWithNoReceiveFailsAfterTheRnrTimeout() {
        String job = jobId("rnr");
        long rnrMs = 300;
        SwNicConfig cfg = SwNicConfig.defaults().withJobId(job).withShmBase(base).withRnrTimeout(Duration.ofMillis(rnrMs));
        try (RemotePeer child = RemotePeer.start("rnr-receiver", job, base);
             LocalPeer me = LocalPeer.open("rnr-sender", cfg)) {
            setUp(me, child);
            long t0 = System.nanoTime();
            me.postSend("q", Wr.of(Opcode.SEND, 1).sge("b", 0, 64));
            Peer.Cqe c = awaitCqe(me, "q", Cq.SEND, NO_HANG);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(CompletionStatus.RNR_RETRY_EXC_ERR, c.status(), c.toString());
            assertEquals(ErrorDetail.RNR_TIMEOUT, c.detail(), c.toString());
            assertEquals(1, c.wrId());
            assertTrue(ms >= rnrMs - 10, "RNR error after " + ms + " ms, before the " + rnrMs + " ms timeout");
            assertTrue(ms < NO_HANG.toMillis(), "RNR error only after " + ms + " ms");
            assertEquals(new Peer.QpStatus(QpState.ERROR, ErrorDetail.RNR_TIMEOUT), me.status("q"));

            // A receive posted after the failure is never filled; it ends with an error (the sender's
            // queue pair is in the error state) and its buffer is untouched.
            child.postRecv("q", 9, new Sge("b", 0, 4096));
            Peer.Cqe late = awaitCqe(child, "q", Cq.RECV, NO_HANG);
            assertEquals(9, late.wrId());
            assertNotEquals(CompletionStatus.SUCCESS, late.status(), late.toString());
            assertPattern(child, "b", 0, 0, 4096, 2, "receive buffer posted after the RNR error");
        }
    }

    @Test
    void aReceivePostedWithinTheTimeoutLetsTheSendSucceed() throws InterruptedException {
        String job = jobId("rnr");
        // The receive comes 500 ms late: longer than the other test's timeout, well inside this one's.
        SwNicConfig cfg = SwNicConfig.defaults().withJobId(job).withShmBase(base).withRnrTimeout(Duration.ofSeconds(8));
        try (RemotePeer child = RemotePeer.start("rnr-late-receiver", job, base);
             LocalPeer me = LocalPeer.open("rnr-sender", cfg)) {
            setUp(me, child);
            long t0 = System.nanoTime();
            me.postSend("q", Wr.of(Opcode.SEND, 1).sge("b", 0, 64));
            Thread.sleep(500);
            expectNoCqe(me, "q", Cq.SEND);
            child.postRecv("q", 9, new Sge("b", 0, 4096));
            expectSuccess(me, "q", Cq.SEND, 1, CompletionOpcode.SEND, 64);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 8_000, "the send completed only after " + ms + " ms");
            expectSuccess(child, "q", Cq.RECV, 9, CompletionOpcode.RECV, 64);
            assertBytes(Payloads.pattern(1, 64), child.read("b", 0, 64), "payload of the delayed send");
            assertEquals(QpState.READY, me.status("q").state());
        }
    }

    private static void setUp(LocalPeer me, RemotePeer child) {
        me.alloc("b", 4096);
        me.fill("b", 0, 4096, 1);
        me.register("b", "b", 0, 4096, Access.LOCAL_WRITE);
        child.alloc("b", 4096);
        child.fill("b", 0, 4096, 2);
        child.register("b", "b", 0, 4096, Access.LOCAL_WRITE);
        Peer.connectPair(me, "q", child, "q", FOUR);
    }
}
