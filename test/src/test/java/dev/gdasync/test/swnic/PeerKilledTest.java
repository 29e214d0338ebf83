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
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.Peer;
import dev.gdasync.test.harness.Peer.Cq;
import dev.gdasync.test.harness.Peer.Sge;
import dev.gdasync.test.harness.Peer.Wr;
import dev.gdasync.test.harness.RemotePeer;
import dev.gdasync.test.harness.Traffic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static dev.gdasync.test.harness.Checks.NO_HANG;
import static dev.gdasync.test.harness.Checks.awaitCqe;
import static dev.gdasync.test.harness.Checks.awaitTrue;
import static dev.gdasync.test.harness.Checks.expectError;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer killed with SIGKILL in the middle of a transfer: every request this process has outstanding
 * towards it ends with an error naming a dead peer, within seconds (the liveness check runs every
 * 20 ms), and nothing hangs: receives the dead peer was filling with 1 MiB messages, receives it never
 * filled, a send waiting for a receive it will never post, and a host stream waiting on one of those
 * receives' completions (the completion is written with an error, so the stream passes its wait long
 * before the wait's own timeout).
 */
@Timeout(120)
class PeerKilledTest {
    private static final int MIB = 1 << 20;
    private static final Set<CompletionStatus> DEAD_STATUSES = Set.of(CompletionStatus.WR_FLUSH_ERR, CompletionStatus.RETRY_EXC_ERR);

    @TempDir
    Path base;

    @Test
    void everyRequestToAKilledPeerFailsWithinSeconds() {
        String job = jobId("kill");
        SwNicConfig cfg = SwNicConfig.defaults().withJobId(job).withShmBase(base).withRnrTimeout(Duration.ofSeconds(60));
        try (RemotePeer child = RemotePeer.start("victim", job, base);
             LocalPeer me = LocalPeer.open("survivor", cfg);
             HostStream stream = HostStream.create("survivor", WaitPolicy.lowLatency(Duration.ofSeconds(60)))) {
            // "a": the child streams 1 MiB messages to this process, which checks and reposts.
            QueuePairConfig four = new QueuePairConfig(4, 4, 8);
            me.alloc("rxA", 4L * MIB);
            me.register("rxA", "rxA", 0, 4L * MIB, Access.LOCAL_WRITE);
            child.alloc("txA", 4L * MIB);
            child.register("txA", "txA", 0, 4L * MIB, Access.LOCAL_WRITE);
            Peer.connectPair(child, "a", me, "a", four);

            // "b": this process sends to the child, which never posts a receive there; two receives of
            // this process wait on it too, and a host stream waits for the first one's completion.
            me.alloc("b", 64 * 1024);
            me.register("b", "b", 0, 64 * 1024, Access.LOCAL_WRITE);
            Peer.connectPair(me, "b", child, "b", four);
            me.postRecv("b", 21, new Sge("b", 0, 4096));
            me.postRecv("b", 22, new Sge("b", 4096, 4096));
            QueuePair qb = me.qp("b");
            WaitRequest recvWait = qb.prepareWaitCq(qb.recvCq());
            stream.post(List.of(new Descriptor.Wait(recvWait)));
            Event streamPassed = stream.record();
            me.postSend("b", Wr.of(Opcode.SEND, 31).sge("b", 8192, 1024));

            me.startSink("sink", "a", "rxA", Long.MAX_VALUE, MIB, MIB, Duration.ofSeconds(100));
            child.startSource("flood", "a", "txA", Long.MAX_VALUE, MIB, MIB, 1, Duration.ofSeconds(100));
            awaitTrue("three 1 MiB messages arrived intact", Duration.ofSeconds(30), () -> me.progress("sink") >= 3);
            assertNull(me.poll("b", Cq.SEND, Duration.ZERO), "the send to the child completed without a receive");
            assertFalse(streamPassed.isDone(), "the stream passed a wait for a receive nobody filled");

            long killed = System.nanoTime();
            child.kill();

            // The stream on "a": whatever arrived intact, then errors for every receive still posted.
            Traffic.Result sink = me.awaitOrNull("sink", NO_HANG);
            assertNotNull(sink, "the receives posted to the killed peer did not all complete within " + NO_HANG.toSeconds() + " s");
            assertNull(sink.failure(), "stream from the killed peer: " + sink);
            assertTrue(sink.ok() >= 3, sink.toString());
            assertTrue(sink.errors() >= 1, "no receive failed after the kill: " + sink);
            assertTrue(DEAD_STATUSES.contains(sink.firstErrorStatus()), sink.toString());
            assertEquals(ErrorDetail.PEER_DEAD, sink.firstErrorDetail(), sink.toString());
            assertEquals(0, sink.outstanding(), sink.toString());
            assertEquals(new Peer.QpStatus(QpState.ERROR, ErrorDetail.PEER_DEAD), me.status("a"));

            // On "b": the waiting send, both receives, and the stream's wait.
            Peer.Cqe send = awaitCqe(me, "b", Cq.SEND, remaining(killed));
            assertEquals(31, send.wrId(), send.toString());
            assertTrue(DEAD_STATUSES.contains(send.status()), send.toString());
            assertEquals(ErrorDetail.PEER_DEAD, send.detail(), send.toString());
            assertTrue(streamPassed.synchronize(remaining(killed)),
                    "the host stream did not pass its wait on a receive completion of the dead peer");
            assertNull(stream.failure(), "the stream failed instead of passing its wait: " + stream.failure());
            for (long wrId : new long[] {21, 22}) {
                Peer.Cqe r = awaitCqe(me, "b", Cq.RECV, remaining(killed));
                assertEquals(wrId, r.wrId(), r.toString());
                assertTrue(DEAD_STATUSES.contains(r.status()), r.toString());
                assertEquals(ErrorDetail.PEER_DEAD, r.detail(), r.toString());
            }
            assertEquals(new Peer.QpStatus(QpState.ERROR, ErrorDetail.PEER_DEAD), me.status("b"));
            long ms = (System.nanoTime() - killed) / 1_000_000;
            assertTrue(ms < NO_HANG.toMillis(), "the outstanding requests took " + ms + " ms to fail after the kill");
            System.out.println("PeerKilledTest: " + sink.ok() + " MiB messages verified, then " + sink.errors()
                    + " receives failed with " + sink.firstErrorStatus() + "/" + sink.firstErrorDetail()
                    + "; everything outstanding failed " + ms + " ms after the kill");

            // New work towards the dead peer fails at once too.
            me.postRecv("b", 23, new Sge("b", 0, 4096));
            Peer.Cqe late = awaitCqe(me, "b", Cq.RECV, NO_HANG);
            assertEquals(23, late.wrId(), late.toString());
            assertEquals(CompletionStatus.WR_FLUSH_ERR, late.status(), late.toString());
            me.postSend("b", Wr.of(Opcode.SEND, 32).sge("b", 8192, 16));
            expectError(me, "b", Cq.SEND, 32, CompletionStatus.WR_FLUSH_ERR, ErrorDetail.FLUSHED);
        }
    }

    private static Duration remaining(long killedNanos) {
        long left = NO_HANG.toNanos() - (System.nanoTime() - killedNanos);
        return Duration.ofNanos(Math.max(left, 0));
    }
}
