package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.Payloads;
import dev.gdasync.test.harness.Peer;
import dev.gdasync.test.harness.RemotePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.gdasync.test.harness.Checks.assertClean;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Mixed signaled and unsignaled sends to another process: only the signaled ones write send
 * completions, with their wr ids in order, and every message arrives. The first 40 sends (mostly
 * unsignaled) are posted before the peer has any receive, so they execute later on the agent, which
 * must honour the flag too.
 */
@Timeout(120)
class SignaledMixTest {
    private static final int COUNT = 400;
    private static final int MAX = 256;

    @TempDir
    Path base;

    private static boolean signaled(long seq) {
        if (seq == COUNT - 1) {
            return true;
        }
        if (seq >= 100 && seq < 180) {
            return false; // a run longer than the send queue with no completion at all
        }
        return seq % 7 == 3 || seq % 11 == 0;
    }

    @Test
    void onlySignaledSendsComplete() {
        String job = jobId("sig");
        try (RemotePeer child = RemotePeer.start("sig", job, base);
             LocalPeer me = LocalPeer.open("sig-parent", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            me.alloc("buf", 64L * MAX);
            me.register("tx", "buf", 0, 64L * MAX, Access.LOCAL_WRITE);
            child.alloc("buf", 64L * MAX);
            child.register("rx", "buf", 0, 64L * MAX, Access.LOCAL_WRITE);
            Peer.connectPair(me, "q", child, "q", new QueuePairConfig(64, 64, 32));

            QueuePair qp = me.qp("q");
            MemoryRegion tx = me.mr("tx");
            MemorySegment seg = tx.segment();
            SendWorkRequest wr = new SendWorkRequest();
            Completion c = new Completion();
            List<Long> expected = new ArrayList<>();
            List<Long> completed = new ArrayList<>();
            for (long s = 0; s < COUNT; s++) {
                if (signaled(s)) {
                    expected.add(s);
                }
            }

            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            long next = 0;
            boolean sinkStarted = false;
            while (next < COUNT || completed.size() < expected.size()) {
                if (System.nanoTime() - deadline > 0) {
                    fail("stalled: posted " + next + ", send completions " + completed.size() + " of " + expected.size()
                            + ", " + qp);
                }
                while (qp.sendCq().poll(c) == 1) {
                    assertEquals(CompletionStatus.SUCCESS, c.status(), c.toString());
                    assertEquals(CompletionOpcode.SEND, c.opcode(), c.toString());
                    assertTrue(signaled(c.wrId()), "an unsignaled send wrote a completion: " + c);
                    assertEquals(Payloads.messageSize(c.wrId(), 8, MAX), c.byteLength(), c.toString());
                    completed.add(c.wrId());
                }
                if (next == 40 && !sinkStarted) {
                    // 40 sends wait for receives that do not exist yet: none may have completed.
                    assertEquals(List.of(), completed, "completions before the peer posted any receive");
                    assertEquals(64 - 40, qp.sendQueueFree());
                    child.startSink("sink", "q", "rx", COUNT, 8, MAX, Duration.ofSeconds(60));
                    sinkStarted = true;
                }
                if (next < COUNT && qp.sendQueueFree() > 0) {
                    int size = Payloads.messageSize(next, 8, MAX);
                    long off = (next % 64) * MAX;
                    MemorySegment.copy(Payloads.message(next, size), 0, seg, ValueLayout.JAVA_BYTE, off, size);
                    try {
                        qp.postSend(wr.reset().opcode(Opcode.SEND).wrId(next)
                                .flags(signaled(next) ? SendFlags.SIGNALED : 0).sge(tx, off, size));
                        next++;
                    } catch (QueueFullException e) {
                        // the send CQ is full of unreaped completions: reap and retry
                    }
                } else {
                    Thread.onSpinWait();
                }
            }
            assertEquals(expected, completed, "send completions: exactly the signaled sends, in order");
            assertClean(child.await("sink", Duration.ofSeconds(60)), COUNT, "the child's sink");
            expectNoCqe(me, "q", Peer.Cq.SEND);
            assertEquals(64, qp.sendQueueFree());
        }
    }
}
