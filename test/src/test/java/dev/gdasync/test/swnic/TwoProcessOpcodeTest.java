package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.Arrays;

import static dev.gdasync.test.harness.Checks.assertBytes;
import static dev.gdasync.test.harness.Checks.assertPattern;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.expectSuccess;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every opcode between two processes, in both directions: the scenario is written once against
 * {@link Peer} and run with this JVM initiating (the child is the target) and with the child initiating
 * (this JVM is the target). Payloads are checked byte for byte, and the bytes around every target range
 * are checked untouched.
 */
@Timeout(120)
class TwoProcessOpcodeTest {
    private static final int SIZE = 64 * 1024;
    private static final long INI_SEED = 1;
    private static final long TGT_SEED = 2;

    @TempDir
    Path base;

    @Test
    void thisProcessInitiatesEveryOpcode() {
        String job = jobId("ops");
        try (RemotePeer child = RemotePeer.start("target", job, base);
             LocalPeer me = LocalPeer.open("initiator", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            exerciseAllOpcodes(me, child);
        }
    }

    @Test
    void childInitiatesEveryOpcode() {
        String job = jobId("ops");
        try (RemotePeer child = RemotePeer.start("initiator", job, base);
             LocalPeer me = LocalPeer.open("target", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            exerciseAllOpcodes(child, me);
        }
    }

    private static void exerciseAllOpcodes(Peer ini, Peer tgt) {
        ini.alloc("buf", SIZE);
        ini.fill("buf", 0, SIZE, INI_SEED);
        MrInfo imr = ini.register("mr", "buf", 0, SIZE, Access.ALL);
        tgt.alloc("buf", SIZE);
        tgt.fill("buf", 0, SIZE, TGT_SEED);
        MrInfo tmr = tgt.register("mr", "buf", 0, SIZE, Access.ALL);
        Peer.connectPair(ini, "q", tgt, "q", new QueuePairConfig(16, 16, 32));
        assertFalse(imr.rkey() == tmr.rkey());

        // SEND: lands in the oldest posted receive; the rest of the receive buffer is untouched.
        tgt.postRecv("q", 100, new Sge("mr", 0, 4096));
        ini.fill("buf", 0, 1000, 11);
        ini.postSend("q", Wr.of(Opcode.SEND, 1).sge("mr", 0, 1000));
        expectSuccess(ini, "q", Cq.SEND, 1, CompletionOpcode.SEND, 1000);
        Peer.Cqe c = expectSuccess(tgt, "q", Cq.RECV, 100, CompletionOpcode.RECV, 1000);
        assertFalse(c.hasImmediate(), c.toString());
        assertBytes(Payloads.pattern(11, 1000), tgt.read("buf", 0, 1000), "SEND payload");
        assertPattern(tgt, "buf", 0, 1000, 3096, TGT_SEED, "receive buffer past the message");

        // SEND_WITH_IMM: the immediate arrives in the receive completion.
        tgt.postRecv("q", 101, new Sge("mr", 4096, 4096));
        ini.fill("buf", 2000, 512, 12);
        ini.postSend("q", Wr.of(Opcode.SEND_WITH_IMM, 2).imm(0xCAFEBABE).sge("mr", 2000, 512));
        expectSuccess(ini, "q", Cq.SEND, 2, CompletionOpcode.SEND, 512);
        c = expectSuccess(tgt, "q", Cq.RECV, 101, CompletionOpcode.RECV, 512);
        assertTrue(c.hasImmediate(), c.toString());
        assertEquals(0xCAFEBABE, c.immediate(), c.toString());
        assertBytes(Payloads.pattern(12, 512), tgt.read("buf", 4096, 512), "SEND_WITH_IMM payload");

        // RDMA_WRITE at an unaligned remote address: exactly the range changes, no receive is consumed.
        ini.fill("buf", 4096, 3000, 13);
        ini.postSend("q", Wr.of(Opcode.RDMA_WRITE, 3).remote(tmr.address() + 16384 + 5, tmr.rkey()).sge("mr", 4096, 3000));
        expectSuccess(ini, "q", Cq.SEND, 3, CompletionOpcode.RDMA_WRITE, 3000);
        assertBytes(Payloads.pattern(13, 3000), tgt.read("buf", 16384 + 5, 3000), "RDMA_WRITE payload");
        assertPattern(tgt, "buf", 0, 16384, 5, TGT_SEED, "bytes before the RDMA_WRITE range");
        assertPattern(tgt, "buf", 0, 16384 + 5 + 3000, 64, TGT_SEED, "bytes after the RDMA_WRITE range");
        expectNoCqe(tgt, "q", Cq.RECV);

        // RDMA_WRITE_WITH_IMM: data into the target range, a receive consumed (its buffer untouched), the
        // immediate and the length in its completion.
        tgt.postRecv("q", 102, new Sge("mr", 8192, 4096));
        ini.fill("buf", 8192, 777, 14);
        ini.postSend("q", Wr.of(Opcode.RDMA_WRITE_WITH_IMM, 4).imm(0x12345678)
                .remote(tmr.address() + 20480, tmr.rkey()).sge("mr", 8192, 777));
        expectSuccess(ini, "q", Cq.SEND, 4, CompletionOpcode.RDMA_WRITE, 777);
        c = expectSuccess(tgt, "q", Cq.RECV, 102, CompletionOpcode.RECV_RDMA_WITH_IMM, 777);
        assertTrue(c.hasImmediate(), c.toString());
        assertEquals(0x12345678, c.immediate(), c.toString());
        assertBytes(Payloads.pattern(14, 777), tgt.read("buf", 20480, 777), "RDMA_WRITE_WITH_IMM payload");
        assertPattern(tgt, "buf", 0, 20480 + 777, 64, TGT_SEED, "bytes after the RDMA_WRITE_WITH_IMM range");
        assertPattern(tgt, "buf", 0, 8192, 4096, TGT_SEED, "the receive buffer an RDMA_WRITE_WITH_IMM consumed");

        // RDMA_READ, scattered into two local buffers with a gap between them.
        tgt.fill("buf", 24576, 2048, 15);
        ini.postSend("q", Wr.of(Opcode.RDMA_READ, 5).remote(tmr.address() + 24576 + 3, tmr.rkey())
                .sge("mr", 12288, 1000).sge("mr", 14000, 1045));
        expectSuccess(ini, "q", Cq.SEND, 5, CompletionOpcode.RDMA_READ, 2045);
        assertBytes(Payloads.pattern(15, 3, 1000), ini.read("buf", 12288, 1000), "RDMA_READ first buffer");
        assertBytes(Payloads.pattern(15, 1003, 1045), ini.read("buf", 14000, 1045), "RDMA_READ second buffer");
        assertPattern(ini, "buf", 0, 13288, 14000 - 13288, INI_SEED, "local gap between the READ buffers");
        assertPattern(ini, "buf", 0, 15045, 64, INI_SEED, "local bytes after the READ");
        assertPattern(tgt, "buf", 24576, 24576, 2048, 15, "RDMA_READ source (unchanged)");

        // Atomics: the original value lands in the local 8-byte buffer; the peer's word is updated.
        long word = 32768;
        tgt.set64("buf", word, 1000);
        tgt.set64("buf", word + 8, 0x5555555555555555L);
        ini.set64("buf", 16384, 0xDEADL);
        ini.postSend("q", Wr.of(Opcode.ATOMIC_FETCH_ADD, 6).remote(tmr.address() + word, tmr.rkey()).compareAdd(234)
                .sge("mr", 16384, 8));
        expectSuccess(ini, "q", Cq.SEND, 6, CompletionOpcode.FETCH_ADD, 8);
        assertEquals(1000, ini.get64("buf", 16384), "FETCH_ADD original value");
        assertEquals(1234, tgt.get64("buf", word), "FETCH_ADD target word");

        long swap = 0x7777000000000001L;
        ini.postSend("q", Wr.of(Opcode.ATOMIC_CMP_SWAP, 7).remote(tmr.address() + word, tmr.rkey()).compareAdd(1234)
                .swap(swap).sge("mr", 16392, 8));
        expectSuccess(ini, "q", Cq.SEND, 7, CompletionOpcode.COMP_SWAP, 8);
        assertEquals(1234, ini.get64("buf", 16392), "CMP_SWAP (matching) original value");
        assertEquals(swap, tgt.get64("buf", word), "CMP_SWAP (matching) target word swapped");

        ini.postSend("q", Wr.of(Opcode.ATOMIC_CMP_SWAP, 8).remote(tmr.address() + word, tmr.rkey()).compareAdd(1234)
                .swap(42).sge("mr", 16400, 8));
        expectSuccess(ini, "q", Cq.SEND, 8, CompletionOpcode.COMP_SWAP, 8);
        assertEquals(swap, ini.get64("buf", 16400), "CMP_SWAP (failing compare) returns the current value");
        assertEquals(swap, tgt.get64("buf", word), "CMP_SWAP (failing compare) leaves the target word alone");
        assertEquals(0x5555555555555555L, tgt.get64("buf", word + 8), "word next to the atomic target");
        assertPattern(ini, "buf", 0, 16408, 64, INI_SEED, "local bytes after the atomic result buffers");

        // INLINE: the payload is copied at post time. Both requests wait behind a SEND the peer has no
        // receive for yet; their source buffers are overwritten before the peer posts it.
        ini.fill("buf", 20000, 100, 16);
        ini.postSend("q", Wr.of(Opcode.SEND, 9).flags(SendFlags.SIGNALED | SendFlags.INLINE).sge("mr", 20000, 100));
        ini.fill("buf", 20200, 64, 18);
        ini.postSend("q", Wr.of(Opcode.RDMA_WRITE, 10).flags(SendFlags.SIGNALED | SendFlags.INLINE)
                .remote(tmr.address() + 28672, tmr.rkey()).sge("mr", 20200, 64));
        ini.fill("buf", 20000, 100, 17);
        ini.fill("buf", 20200, 64, 19);
        expectNoCqe(ini, "q", Cq.SEND); // still waiting for the receive
        tgt.postRecv("q", 103, new Sge("mr", 12288, 4096));
        expectSuccess(ini, "q", Cq.SEND, 9, CompletionOpcode.SEND, 100);
        expectSuccess(ini, "q", Cq.SEND, 10, CompletionOpcode.RDMA_WRITE, 64);
        expectSuccess(tgt, "q", Cq.RECV, 103, CompletionOpcode.RECV, 100);
        assertBytes(Payloads.pattern(16, 100), tgt.read("buf", 12288, 100), "INLINE SEND payload (as posted)");
        assertBytes(Payloads.pattern(18, 64), tgt.read("buf", 28672, 64), "INLINE RDMA_WRITE payload (as posted)");

        // Multi-SGE: a 3-buffer gather scattered over 3 receive buffers with other boundaries.
        ini.fill("buf", 24000, 100, 20);
        ini.fill("buf", 24200, 37, 21);
        ini.fill("buf", 24300, 1000, 22);
        byte[] gathered = concat(Payloads.pattern(20, 100), Payloads.pattern(21, 37), Payloads.pattern(22, 1000));
        tgt.postRecv("q", 104, new Sge("mr", 36864, 500), new Sge("mr", 40000, 13), new Sge("mr", 41000, 700));
        ini.postSend("q", Wr.of(Opcode.SEND_WITH_IMM, 11).imm(7).sge("mr", 24000, 100).sge("mr", 24200, 37)
                .sge("mr", 24300, 1000));
        expectSuccess(ini, "q", Cq.SEND, 11, CompletionOpcode.SEND, 1137);
        c = expectSuccess(tgt, "q", Cq.RECV, 104, CompletionOpcode.RECV, 1137);
        assertEquals(7, c.immediate());
        assertBytes(Arrays.copyOfRange(gathered, 0, 500), tgt.read("buf", 36864, 500), "scatter buffer 0");
        assertBytes(Arrays.copyOfRange(gathered, 500, 513), tgt.read("buf", 40000, 13), "scatter buffer 1");
        assertBytes(Arrays.copyOfRange(gathered, 513, 1137), tgt.read("buf", 41000, 624), "scatter buffer 2");
        assertPattern(tgt, "buf", 0, 37364, 40000 - 37364, TGT_SEED, "gap after scatter buffer 0");
        assertPattern(tgt, "buf", 0, 40013, 41000 - 40013, TGT_SEED, "gap after scatter buffer 1");
        assertPattern(tgt, "buf", 0, 41624, 76, TGT_SEED, "unused tail of scatter buffer 2");

        // Gather on RDMA_WRITE: two local buffers land contiguously.
        ini.postSend("q", Wr.of(Opcode.RDMA_WRITE, 12).remote(tmr.address() + 45056, tmr.rkey())
                .sge("mr", 24300, 1000).sge("mr", 24000, 100));
        expectSuccess(ini, "q", Cq.SEND, 12, CompletionOpcode.RDMA_WRITE, 1100);
        assertBytes(concat(Payloads.pattern(22, 1000), Payloads.pattern(20, 100)), tgt.read("buf", 45056, 1100),
                "gathered RDMA_WRITE");
        assertPattern(tgt, "buf", 0, 46156, 64, TGT_SEED, "bytes after the gathered RDMA_WRITE");

        // Nothing else completed, and both queue pairs are healthy.
        expectNoCqe(ini, "q", Cq.SEND);
        expectNoCqe(ini, "q", Cq.RECV);
        expectNoCqe(tgt, "q", Cq.SEND);
        expectNoCqe(tgt, "q", Cq.RECV);
        assertEquals(QpState.READY, ini.status("q").state());
        assertEquals(QpState.READY, tgt.status("q").state());
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }
}
