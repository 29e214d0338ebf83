package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.Peer;
import dev.gdasync.test.harness.RemotePeer;
import dev.gdasync.test.harness.Traffic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static dev.gdasync.test.harness.Checks.assertClean;
import static dev.gdasync.test.harness.Checks.awaitTrue;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Thousands of sequence-numbered messages through small rings, so that the send queue, the receive
 * queue and both completion queues wrap around many times, with receives reposted as they are reaped
 * and every payload checked in order ({@link Traffic}).
 */
@Timeout(120)
class RingWrapAroundTest {
    private static final Duration STREAM_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path base;

    @Test
    void thousandsOfMessagesEachWayThroughRingsOf64() {
        String job = jobId("wrap");
        QueuePairConfig small = new QueuePairConfig(64, 64, 128);
        int count = 5000;
        int max = 512;
        try (RemotePeer child = RemotePeer.start("wrap", job, base);
             LocalPeer me = LocalPeer.open("wrap-parent", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            me.alloc("buf", 2L * 64 * max);
            me.register("tx", "buf", 0, 64L * max, Access.LOCAL_WRITE);
            me.register("rx", "buf", 64L * max, 64L * max, Access.LOCAL_WRITE);
            child.alloc("buf", 2L * 64 * max);
            child.register("tx", "buf", 0, 64L * max, Access.LOCAL_WRITE);
            child.register("rx", "buf", 64L * max, 64L * max, Access.LOCAL_WRITE);

            // This process sends, the child receives.
            Peer.connectPair(me, "out", child, "in", small);
            child.startSink("sink", "in", "rx", count, 8, max, STREAM_TIMEOUT);
            Traffic.Result sent = Traffic.source(me.qp("out"), me.mr("tx"), count, 8, max, 1, STREAM_TIMEOUT, () -> false, null);
            assertClean(sent, count, "source in this process");
            assertClean(child.await("sink", STREAM_TIMEOUT), count, "sink in the child");

            // The child sends (every 5th signaled), this process receives.
            Peer.connectPair(child, "out", me, "in", small);
            child.startSource("source", "out", "tx", count, 8, max, 5, STREAM_TIMEOUT);
            Traffic.Result received = Traffic.sink(me.qp("in"), me.mr("rx"), count, 8, max, STREAM_TIMEOUT, () -> false, null);
            assertClean(received, count, "sink in this process");
            assertClean(child.await("source", STREAM_TIMEOUT), count, "source in the child");

            expectNoCqe(me, "out", Peer.Cq.SEND);
            expectNoCqe(me, "in", Peer.Cq.RECV);
            assertEquals(64, me.qp("out").sendQueueFree());
            assertEquals(64, me.qp("in").recvQueueFree());
        }
    }

    @Test
    void hundredsOfSendsOutstandingBeforeTheReceiverPostsAny() {
        String job = jobId("wrap");
        QueuePairConfig deepSend = new QueuePairConfig(512, 64, 1024);
        int count = 3000;
        int max = 256;
        try (RemotePeer child = RemotePeer.start("wrap-late", job, base);
             LocalPeer me = LocalPeer.open("wrap-parent", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            me.alloc("buf", 512L * max);
            me.register("tx", "buf", 0, 512L * max, Access.LOCAL_WRITE);
            child.alloc("buf", 64L * max);
            child.register("rx", "buf", 0, 64L * max, Access.LOCAL_WRITE);
            Peer.connectPair(me, "out", child, "in", deepSend);

            // The source fills the whole send queue: nothing can execute, the peer has no receive yet.
            me.startSource("source", "out", "tx", count, 8, max, 1, STREAM_TIMEOUT);
            awaitTrue("512 sends posted", Duration.ofSeconds(20), () -> me.progress("source") >= 512);
            assertEquals(512, me.progress("source"), "sends beyond the send queue's depth were accepted");
            assertEquals(0, me.qp("out").sendQueueFree());
            assertEquals(0, me.qp("out").sendCq().polled(), "a send completed before the peer posted a receive");

            // The receiver starts with 64 receives and reposts: the 512 drain through it and the rest follow.
            child.startSink("sink", "in", "rx", count, 8, max, STREAM_TIMEOUT);
            assertClean(child.await("sink", STREAM_TIMEOUT), count, "sink in the child");
            assertClean(me.await("source", STREAM_TIMEOUT), count, "source in this process");
        }
    }
}
