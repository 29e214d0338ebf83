package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.Peer;
import dev.gdasync.test.harness.Peer.Cq;
import dev.gdasync.test.harness.Peer.Sge;
import dev.gdasync.test.harness.Peer.Wr;
import dev.gdasync.test.harness.RemotePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static dev.gdasync.test.harness.Checks.NO_HANG;
import static dev.gdasync.test.harness.Checks.awaitCqe;
import static dev.gdasync.test.harness.Checks.awaitTrue;
import static dev.gdasync.test.harness.Checks.expectError;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer that closes cleanly: first one queue pair, then its whole NIC. This process's requests to it
 * end with errors whose detail is PEER_CLOSED within seconds, its queue pairs enter the error state, a
 * stream waiting on one of those completions passes, and queue pairs to the peer that it did not close
 * keep working until it closes the NIC.
 */
@Timeout(120)
class PeerClosedTest {
    private static final Set<CompletionStatus> GONE = Set.of(CompletionStatus.WR_FLUSH_ERR, CompletionStatus.RETRY_EXC_ERR);

    @TempDir
    Path base;

    @Test
    void closingAQueuePairThenTheNicFailsOutstandingWorkWithPeerClosed() {
        String job = jobId("close");
        SwNicConfig cfg = SwNicConfig.defaults().withJobId(job).withShmBase(base).withRnrTimeout(Duration.ofSeconds(60));
        try (RemotePeer child = RemotePeer.start("closer", job, base);
             LocalPeer me = LocalPeer.open("left", cfg);
             HostStream stream = HostStream.create("left", WaitPolicy.lowLatency(Duration.ofSeconds(60)))) {
            QueuePairConfig four = new QueuePairConfig(4, 4, 8);
            me.alloc("b", 64 * 1024);
            me.register("b", "b", 0, 64 * 1024, Access.LOCAL_WRITE);
            child.alloc("b", 64 * 1024);
            child.register("b", "b", 0, 64 * 1024, Access.LOCAL_WRITE);
            Peer.connectPair(me, "q1", child, "q1", four);
            Peer.connectPair(me, "q2", child, "q2", four);
            Peer.connectPair(me, "q3", child, "q3", four);
            me.postRecv("q1", 11, new Sge("b", 0, 4096));
            me.postRecv("q1", 12, new Sge("b", 4096, 4096));
            me.postRecv("q2", 21, new Sge("b", 8192, 4096));

            // The child closes q1 only.
            child.closeQp("q1");
            long t0 = System.nanoTime();
            for (long wrId : new long[] {11, 12}) {
                Peer.Cqe c = awaitCqe(me, "q1", Cq.RECV, NO_HANG);
                assertEquals(wrId, c.wrId(), c.toString());
                assertEquals(CompletionStatus.WR_FLUSH_ERR, c.status(), c.toString());
                assertEquals(ErrorDetail.PEER_CLOSED, c.detail(), c.toString());
            }
            assertTrue(System.nanoTime() - t0 < NO_HANG.toNanos());
            assertEquals(new Peer.QpStatus(QpState.ERROR, ErrorDetail.PEER_CLOSED), me.status("q1"));

            // q2 is still fine: a message goes through in both directions.
            child.postRecv("q2", 7, new Sge("b", 0, 4096));
            me.postSend("q2", Wr.of(Opcode.SEND, 1).sge("b", 32768, 64));
            assertEquals(CompletionStatus.SUCCESS, awaitCqe(me, "q2", Cq.SEND, NO_HANG).status());
            assertEquals(CompletionStatus.SUCCESS, awaitCqe(child, "q2", Cq.RECV, NO_HANG).status());
            child.postSend("q2", Wr.of(Opcode.SEND, 2).sge("b", 32768, 64));
            assertEquals(CompletionStatus.SUCCESS, awaitCqe(me, "q2", Cq.RECV, NO_HANG).status());
            assertEquals(QpState.READY, me.status("q2").state());

            // Outstanding on q3 when the child closes its NIC: two receives (a stream waits for the first
            // one's completion) and a send waiting for a receive the child will not post.
            me.postRecv("q3", 22, new Sge("b", 12288, 4096));
            me.postRecv("q3", 23, new Sge("b", 16384, 4096));
            QueuePair q3 = me.qp("q3");
            stream.post(List.of(new Descriptor.Wait(q3.prepareWaitCq(q3.recvCq()))));
            Event passed = stream.record();
            me.postSend("q3", Wr.of(Opcode.SEND, 3).sge("b", 32768, 64));
            expectNoCqe(me, "q3", Cq.SEND);
            assertFalse(passed.isDone());
            Path childDir = child.processDirectory();
            assertTrue(Files.isDirectory(childDir));

            child.closeNic();
            long t1 = System.nanoTime();
            assertFalse(Files.exists(childDir), "a NIC that closes removes its shared-memory directory");
            Peer.Cqe send = awaitCqe(me, "q3", Cq.SEND, NO_HANG);
            assertEquals(3, send.wrId(), send.toString());
            assertTrue(GONE.contains(send.status()), send.toString());
            assertEquals(ErrorDetail.PEER_CLOSED, send.detail(), send.toString());
            assertTrue(passed.synchronize(NO_HANG), "the stream did not pass its wait on a receive of the closed peer");
            assertEquals(null, stream.failure());
            for (long wrId : new long[] {22, 23}) {
                Peer.Cqe c = awaitCqe(me, "q3", Cq.RECV, NO_HANG);
                assertEquals(wrId, c.wrId(), c.toString());
                assertTrue(GONE.contains(c.status()), c.toString());
                assertEquals(ErrorDetail.PEER_CLOSED, c.detail(), c.toString());
            }
            assertTrue(System.nanoTime() - t1 < NO_HANG.toNanos(), "the requests took too long to fail");
            for (String qp : List.of("q2", "q3")) {
                awaitTrue(qp + " in the error state", NO_HANG, () -> me.status(qp).state() == QpState.ERROR);
                assertEquals(ErrorDetail.PEER_CLOSED, me.status(qp).detail(), qp);
            }
            me.postSend("q2", Wr.of(Opcode.SEND, 4).sge("b", 32768, 64));
            expectError(me, "q2", Cq.SEND, 4, CompletionStatus.WR_FLUSH_ERR, ErrorDetail.FLUSHED);

            // The child process itself is still up and exits cleanly.
            assertEquals(0, child.exit());
        }
    }
}
