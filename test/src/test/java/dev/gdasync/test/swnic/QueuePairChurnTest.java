package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
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

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static dev.gdasync.test.harness.Checks.assertBytes;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.expectSuccess;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Queue pairs created, connected to another process and closed while the agent polls eagerly (a send
 * to that process waits for a receive): closing a queue pair must not pull its shared memory from under
 * the agent. The agent reports an unexpected error on stderr once; this test watches for it.
 */
@Timeout(120)
class QueuePairChurnTest {
    private static final QueuePairConfig TINY = new QueuePairConfig(4, 4, 8);

    @TempDir
    Path base;

    @Test
    void closingQueuePairsUnderABusyAgentIsClean() {
        String job = jobId("churn");
        PrintStream originalErr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (RemotePeer child = RemotePeer.start("churn", job, base);
             LocalPeer me = LocalPeer.open("churn-parent", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            child.alloc("r", 4096);
            child.register("rx", "r", 0, 4096, Access.LOCAL_WRITE);
            me.alloc("b", 4096);
            me.fill("b", 0, 64, 3);
            me.register("mr", "b", 0, 4096, Access.LOCAL_WRITE);
            Peer.connectPair(me, "hot", child, "hot", TINY);
            Endpoint childEndpoint = child.createQp("other", TINY);
            child.alloc("t", 4096);
            Peer.MrInfo target = child.register("t", "t", 0, 4096, Access.ALL);
            // The child has no receive: this send stalls and keeps the agent polling eagerly.
            me.postSend("hot", Wr.of(Opcode.SEND, 1).sge("mr", 0, 64));
            expectNoCqe(me, "hot", Cq.SEND);

            System.setErr(new PrintStream(new TeeStream(originalErr, captured), true, StandardCharsets.UTF_8));
            for (int i = 0; i < 400; i++) {
                QueuePair q = me.nic().createQueuePair(TINY);
                if (i % 2 == 0) {
                    q.connect(childEndpoint);
                    if (i % 4 == 0) {
                        // A write rung by a plain store: the agent runs it, and the queue pair closes
                        // while the agent may still be at it.
                        SendRequest r = q.prepareSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).flags(0)
                                .remote(target.address(), target.rkey()).sge(me.mr("mr"), 0, 64));
                        r.expectPlainStoreRing();
                        r.doorbellRecord().set32(r.doorbellRecordValue(), true);
                        r.doorbell().set64(r.doorbellValue(), false);
                        for (int spin = 0; spin < (i % 16) * 50; spin++) {
                            Thread.onSpinWait();
                        }
                    }
                }
                q.close();
            }
            System.setErr(originalErr);

            // The agent still serves the stalled send once the receive comes.
            child.postRecv("hot", 7, new Sge("rx", 0, 4096));
            expectSuccess(me, "hot", Cq.SEND, 1, CompletionOpcode.SEND, 64);
            expectSuccess(child, "hot", Cq.RECV, 7, CompletionOpcode.RECV, 64);
            assertBytes(Payloads.pattern(3, 64), child.read("r", 0, 64), "payload of the stalled send");
        } finally {
            System.setErr(originalErr);
        }
        String err = captured.toString(StandardCharsets.UTF_8);
        assertFalse(err.contains("unexpected error"), "the agent failed while queue pairs were closed:\n" + err);
    }

    @Test
    void closingQueuePairsUnderAnInterpretedAgentIsClean() {
        // -Xint widens the window between the agent's check of a queue pair and its read of the queue
        // pair's memory from nanoseconds to microseconds.
        String job = jobId("churn");
        try (LocalPeer me = LocalPeer.open("churn-parent", SwNicConfig.defaults().withJobId(job).withShmBase(base));
             RemotePeer child = RemotePeer.start("churn-xint", java.util.List.of("-Xint"), job, base)) {
            me.alloc("r", 1 << 20);
            me.register("rx", "r", 0, 4096, Access.LOCAL_WRITE);
            Peer.MrInfo target = me.register("t", "r", 0, 1 << 20, Access.ALL);
            child.alloc("b", 1 << 20);
            child.register("mr", "b", 0, 1 << 20, Access.LOCAL_WRITE);
            Peer.connectPair(child, "hot", me, "hot", TINY);
            Endpoint other = me.createQp("other", TINY);
            child.postSend("hot", Wr.of(Opcode.SEND, 1).sge("mr", 0, 64)); // stalls: the agent polls eagerly
            child.call("CHURN " + Integer.toHexString(400) + " " + other.toHex() + " " + Long.toHexString(target.address())
                    + " " + Long.toHexString(target.rkey()) + " mr " + Integer.toHexString(1 << 20), java.time.Duration.ofSeconds(90));
            me.postRecv("hot", 7, new Sge("rx", 0, 4096));
            expectSuccess(child, "hot", Cq.SEND, 1, CompletionOpcode.SEND, 64);
            String out = child.child().describe();
            assertFalse(out.contains("unexpected error"), "the child's agent failed while queue pairs were closed:\n" + out);
        }
    }

    private static final class TeeStream extends OutputStream {
        private final OutputStream a;
        private final OutputStream b;

        TeeStream(OutputStream a, OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public synchronized void write(int c) throws java.io.IOException {
            a.write(c);
            b.write(c);
        }

        @Override
        public synchronized void write(byte[] buf, int off, int len) throws java.io.IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }

        @Override
        public synchronized void flush() throws java.io.IOException {
            a.flush();
            b.flush();
        }
    }
}
