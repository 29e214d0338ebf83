package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.Payloads;
import dev.gdasync.test.harness.Peer;
import dev.gdasync.test.harness.Peer.Cq;
import dev.gdasync.test.harness.Peer.MrInfo;
import dev.gdasync.test.harness.Peer.Sge;
import dev.gdasync.test.harness.Peer.Wr;
import dev.gdasync.test.harness.RemotePeer;
import dev.gdasync.test.harness.Traffic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static dev.gdasync.test.harness.Checks.NO_HANG;
import static dev.gdasync.test.harness.Checks.assertBytes;
import static dev.gdasync.test.harness.Checks.awaitCqe;
import static dev.gdasync.test.harness.Checks.awaitTrue;
import static dev.gdasync.test.harness.Checks.expectError;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.expectSuccess;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The software NIC's small-message fast path between two processes: a send posted from the CPU when nothing is
 * queued runs from its work request, without its send queue entry (one host buffer at each end, the receive
 * posted, every check passed), and everything else takes the send queue as before. These scenarios mix both paths
 * on one queue pair and check that the mix keeps the NIC model's semantics: per-queue-pair order, the completions
 * (immediates, unsignaled sends), a receive too small, keys forged or gone stale on one-sided work and receives of
 * the same queue pair, and a peer killed in the middle of a stream of small messages (an error, never a hang).
 * This process sends (the fast path runs here); a child JVM receives and is the target.
 */
@Timeout(120)
class SmallMessageFastPathTest {
    private static final QueuePairConfig SMALL = new QueuePairConfig(32, 32, 64);
    private static final long SLOT = 64 * 1024;

    @TempDir
    static Path base;
    private static String job;
    private static RemotePeer child;
    private static LocalPeer me;

    @BeforeAll
    static void start() {
        job = jobId("fast");
        child = RemotePeer.start("fast-rx", job, base);
        me = LocalPeer.open("fast-tx", SwNicConfig.defaults().withJobId(job).withShmBase(base));
        child.alloc("rx", 16 * SLOT);
        child.register("rx", "rx", 0, 16 * SLOT, Access.LOCAL_WRITE);
        me.alloc("tx", 16 * SLOT);
        me.register("tx", "tx", 0, 16 * SLOT, Access.ALL);
    }

    @AfterAll
    static void stop() {
        if (me != null) {
            me.close();
        }
        if (child != null) {
            child.close();
        }
    }

    /** One message of the order scenario: what is sent, from where, and what the receiver must see. */
    private record Message(long wrId, Opcode opcode, int flags, int imm, List<Sge> sges, String path) {
        int length() {
            return sges.stream().mapToInt(Sge::length).sum();
        }

        Wr wr() {
            Wr w = Wr.of(opcode, wrId).flags(flags).imm(imm);
            sges.forEach(s -> w.sge(s.mr(), s.offset(), s.length()));
            return w;
        }

        boolean signaled() {
            return (flags & SendFlags.SIGNALED) != 0;
        }
    }

    @Test
    void smallMessagesKeepTheirOrderAmongLargerQueuedAndStalledOnes() {
        Peer.connectPair(me, "order", child, "order", SMALL);
        int sig = SendFlags.SIGNALED;
        List<Message> messages = List.of(
                // Posted before the child posts any receive: the first stalls in the send queue, and the second, a
                // fast-path candidate, must queue behind it instead of overtaking it.
                new Message(1, Opcode.SEND, sig, 0, List.of(new Sge("tx", 0, 8)), "stalled"),
                new Message(2, Opcode.SEND, sig, 0, List.of(new Sge("tx", 64, 8)), "behind a stalled send"),
                new Message(3, Opcode.SEND, sig, 0, List.of(new Sge("tx", SLOT, 48 * 1024)), "fast, 48 KiB"),
                new Message(4, Opcode.SEND_WITH_IMM, sig, 0x5eed_0004, List.of(new Sge("tx", 128, 8)), "fast, immediate"),
                new Message(5, Opcode.SEND, sig | SendFlags.INLINE, 0, List.of(new Sge("tx", 192, 64)), "queued, INLINE"),
                new Message(6, Opcode.SEND, sig, 0, List.of(new Sge("tx", 2 * SLOT, 4096), new Sge("tx", 3 * SLOT, 12 * 1024)),
                        "queued, two buffers"),
                new Message(7, Opcode.SEND, 0, 0, List.of(new Sge("tx", 256, 8)), "fast, unsignaled"),
                new Message(8, Opcode.SEND_WITH_IMM, sig, 0x5eed_0008, List.of(), "queued, empty with immediate"),
                new Message(9, Opcode.SEND, sig, 0, List.of(new Sge("tx", 320, 1)), "fast, 1 byte"),
                new Message(10, Opcode.SEND, sig, 0, List.of(new Sge("tx", 4 * SLOT, 8)), "fast, last"));
        for (Message m : messages) {
            for (Sge s : m.sges()) {
                me.fill("tx", s.offset(), s.length(), 1000 + m.wrId() * 31 + s.offset());
            }
        }
        me.postSend("order", messages.get(0).wr());
        me.postSend("order", messages.get(1).wr());
        expectNoCqe(me, "order", Cq.SEND);
        for (int i = 0; i < messages.size(); i++) {
            child.postRecv("order", 100 + i, new Sge("rx", i * SLOT, (int) SLOT));
        }
        for (int i = 2; i < messages.size(); i++) {
            me.postSend("order", messages.get(i).wr());
        }
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            boolean imm = m.opcode() == Opcode.SEND_WITH_IMM;
            Peer.Cqe r = expectSuccess(child, "order", Cq.RECV, 100 + i, CompletionOpcode.RECV, m.length());
            assertEquals(imm, r.hasImmediate(), m.path() + ": " + r);
            if (imm) {
                assertEquals(m.imm(), r.immediate(), m.path() + ": " + r);
            }
            assertBytes(sent(m), child.read("rx", i * SLOT, m.length()), "message " + m.wrId() + " (" + m.path() + ")");
        }
        for (Message m : messages) {
            if (m.signaled()) {
                expectSuccess(me, "order", Cq.SEND, m.wrId(), CompletionOpcode.SEND, m.length());
            }
        }
        expectNoCqe(me, "order", Cq.SEND);
        assertEquals(QpState.READY, me.status("order").state());
        assertEquals(QpState.READY, child.status("order").state());
    }

    /** The bytes message {@code m} carries, read back from the sender's buffers. */
    private static byte[] sent(Message m) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (Sge s : m.sges()) {
            b.writeBytes(me.read("tx", s.offset(), s.length()));
        }
        return b.toByteArray();
    }

    @Test
    void aReceiveTooSmallFailsAtBothEndsAfterFastSendsAndNothingLands() {
        Peer.connectPair(me, "small", child, "small", SMALL);
        long at = 8 * SLOT;
        child.fill("rx", at, 64, 77);
        me.fill("tx", 0, 8, 5);
        child.postRecv("small", 201, new Sge("rx", at, 8));
        me.postSend("small", Wr.of(Opcode.SEND, 202).sge("tx", 0, 8));
        expectSuccess(child, "small", Cq.RECV, 201, CompletionOpcode.RECV, 8);
        expectSuccess(me, "small", Cq.SEND, 202, CompletionOpcode.SEND, 8);
        byte[] before = child.read("rx", at, 64);

        child.postRecv("small", 203, new Sge("rx", at + 16, 4));
        me.postSend("small", Wr.of(Opcode.SEND, 204).sge("tx", 8, 5));
        expectError(me, "small", Cq.SEND, 204, CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.RECV_TOO_SMALL);
        expectError(child, "small", Cq.RECV, 203, CompletionStatus.LOC_LEN_ERR, ErrorDetail.RECV_TOO_SMALL);
        assertEquals(QpState.ERROR, me.status("small").state());
        assertBytes(before, child.read("rx", at, 64), "receive buffer after the refused message");
        // Later work on the failed queue pair is flushed, fast-path candidate or not.
        me.postSend("small", Wr.of(Opcode.SEND, 205).sge("tx", 0, 8));
        expectError(me, "small", Cq.SEND, 205, CompletionStatus.WR_FLUSH_ERR, ErrorDetail.FLUSHED);
    }

    @Test
    void forgedAndStaleKeysAreRefusedOnTheQueuePairOfFastSends() {
        long win = 10 * SLOT;
        child.fill("rx", win, 4096, 88);
        MrInfo window = child.register("win", "rx", win, 4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        me.fill("tx", 0, 64, 6);

        // A forged rkey (the real one with other random bits) after fast sends: refused, nothing written.
        Peer.connectPair(me, "forged", child, "forged", SMALL);
        child.postRecv("forged", 301, new Sge("rx", 11 * SLOT, 64));
        me.postSend("forged", Wr.of(Opcode.SEND, 302).sge("tx", 0, 8));
        expectSuccess(child, "forged", Cq.RECV, 301, CompletionOpcode.RECV, 8);
        me.postSend("forged", Wr.of(Opcode.RDMA_WRITE, 303).remote(window.address(), window.rkey()).sge("tx", 0, 8));
        expectSuccess(me, "forged", Cq.SEND, 302, CompletionOpcode.SEND, 8);
        expectSuccess(me, "forged", Cq.SEND, 303, CompletionOpcode.RDMA_WRITE, 8);
        byte[] windowBefore = child.read("rx", win, 4096);
        me.fill("tx", 0, 8, 7);
        long forged = window.rkey() ^ (0x5aL << 20);
        me.postSend("forged", Wr.of(Opcode.RDMA_WRITE, 304).remote(window.address(), forged).sge("tx", 0, 8));
        expectError(me, "forged", Cq.SEND, 304, CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
        assertBytes(windowBefore, child.read("rx", win, 4096), "window after the forged write");
        // The queue pair failed: a fast-path candidate posted now is flushed, and the receive it would have filled too.
        child.fill("rx", 11 * SLOT + 64, 64, 90);
        child.postRecv("forged", 305, new Sge("rx", 11 * SLOT + 64, 64));
        me.postSend("forged", Wr.of(Opcode.SEND, 306).sge("tx", 0, 8));
        expectError(me, "forged", Cq.SEND, 306, CompletionStatus.WR_FLUSH_ERR, ErrorDetail.FLUSHED);
        expectError(child, "forged", Cq.RECV, 305, CompletionStatus.WR_FLUSH_ERR, ErrorDetail.PEER_QP_ERROR);
        assertBytes(Payloads.pattern(90, 64), child.read("rx", 11 * SLOT + 64, 64), "buffer of the flushed receive");

        // A stale key: receives into a registration the fast path used a moment ago, deregistered since.
        child.fill("rx", 12 * SLOT, 64, 89);
        child.register("tmp", "rx", 12 * SLOT, 4096, Access.LOCAL_WRITE);
        Peer.connectPair(me, "stale", child, "stale", SMALL);
        child.postRecv("stale", 401, new Sge("tmp", 0, 16));
        child.postRecv("stale", 402, new Sge("tmp", 16, 16));
        me.postSend("stale", Wr.of(Opcode.SEND, 403).sge("tx", 0, 8));
        expectSuccess(child, "stale", Cq.RECV, 401, CompletionOpcode.RECV, 8);
        expectSuccess(me, "stale", Cq.SEND, 403, CompletionOpcode.SEND, 8);
        byte[] tmpBefore = child.read("rx", 12 * SLOT, 64);
        child.deregister("tmp");
        me.fill("tx", 0, 8, 8);
        me.postSend("stale", Wr.of(Opcode.SEND, 404).sge("tx", 0, 8));
        expectError(me, "stale", Cq.SEND, 404, CompletionStatus.REM_OP_ERR, ErrorDetail.RECV_BUFFER_INVALID);
        expectError(child, "stale", Cq.RECV, 402, CompletionStatus.LOC_PROT_ERR, ErrorDetail.RECV_BUFFER_INVALID);
        assertBytes(tmpBefore, child.read("rx", 12 * SLOT, 64), "buffer of the deregistered receive");
        child.deregister("win");
    }

    @Test
    void aPeerKilledInAStreamOfSmallMessagesFailsTheSenderWithoutAHang() {
        String killJob = jobId("fast-kill");
        SwNicConfig cfg = SwNicConfig.defaults().withJobId(killJob).withShmBase(base).withRnrTimeout(Duration.ofSeconds(60));
        try (RemotePeer victim = RemotePeer.start("fast-victim", killJob, base);
             LocalPeer sender = LocalPeer.open("fast-survivor", cfg)) {
            victim.alloc("rx", 64 * 1024);
            victim.register("rx", "rx", 0, 64 * 1024, Access.LOCAL_WRITE);
            sender.alloc("tx", 64 * 1024);
            sender.register("tx", "tx", 0, 64 * 1024, Access.LOCAL_WRITE);
            Peer.connectPair(sender, "s", victim, "s", SMALL);
            victim.startSink("sink", "s", "rx", Long.MAX_VALUE, 8, 8, Duration.ofSeconds(100));
            sender.startSource("flood", "s", "tx", Long.MAX_VALUE, 8, 8, 4, Duration.ofSeconds(100));
            awaitTrue("10 000 small messages sent", Duration.ofSeconds(60), () -> sender.progress("flood") >= 10_000);

            long killed = System.nanoTime();
            victim.kill();
            Traffic.Result flood = sender.awaitOrNull("flood", NO_HANG);
            assertNotNull(flood, "the stream to the killed peer did not end within " + NO_HANG.toSeconds() + " s");
            assertNull(flood.failure(), "stream to the killed peer: " + flood);
            assertTrue(flood.ok() >= 10_000 / 4, flood.toString());
            assertTrue(flood.errors() >= 1, "no send failed after the kill: " + flood);
            assertTrue(Set.of(CompletionStatus.RETRY_EXC_ERR, CompletionStatus.WR_FLUSH_ERR).contains(flood.firstErrorStatus()),
                    flood.toString());
            assertEquals(ErrorDetail.PEER_DEAD, flood.firstErrorDetail(), flood.toString());
            assertEquals(new Peer.QpStatus(QpState.ERROR, ErrorDetail.PEER_DEAD), sender.status("s"));
            // A send posted now fails at once too: the fast path never runs towards a dead peer.
            sender.postSend("s", Wr.of(Opcode.SEND, 9).sge("tx", 0, 8));
            Peer.Cqe late = awaitCqe(sender, "s", Cq.SEND, NO_HANG);
            assertEquals(9, late.wrId(), late.toString());
            assertEquals(CompletionStatus.WR_FLUSH_ERR, late.status(), late.toString());
            long ms = (System.nanoTime() - killed) / 1_000_000;
            System.out.println("SmallMessageFastPathTest: " + flood.ok() + " small messages known delivered, then "
                    + flood.errors() + " failed with " + flood.firstErrorStatus() + "/" + flood.firstErrorDetail()
                    + " within " + ms + " ms of the kill");
        }
    }
}
