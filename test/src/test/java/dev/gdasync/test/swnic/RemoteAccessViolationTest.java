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
import dev.gdasync.test.harness.Peer.MrInfo;
import dev.gdasync.test.harness.Peer.Sge;
import dev.gdasync.test.harness.Peer.Wr;
import dev.gdasync.test.harness.PeerException;
import dev.gdasync.test.harness.RemotePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static dev.gdasync.test.harness.Checks.NO_HANG;
import static dev.gdasync.test.harness.Checks.assertBytes;
import static dev.gdasync.test.harness.Checks.assertPattern;
import static dev.gdasync.test.harness.Checks.awaitTrue;
import static dev.gdasync.test.harness.Checks.expectError;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.expectSuccess;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Forged keys, out-of-bounds ranges and missing access flags against another process's memory. Every
 * violation completes with REM_ACCESS_ERR and the detail of the check that failed, puts the initiator's
 * queue pair in the error state (later work is flushed), writes nothing into the initiator's local
 * buffers, and leaves every byte of the target process's region untouched: the child fills the whole
 * allocated region with a pattern and registers only its middle page, so the guard bytes on both sides
 * are checked too.
 */
@Timeout(120)
class RemoteAccessViolationTest {
    private static final long PAGE = 4096;
    private static final long TARGET_SEED = 77;
    private static final long RECV_SEED = 78;
    private static final long LOCAL_SEED = 5;
    private static final long SENTINEL = 0x5E57_1AE1_5E57_1AE1L;
    private static final QueuePairConfig TINY = new QueuePairConfig(4, 4, 8);

    @TempDir
    Path base;

    enum Fault { FORGED_RKEY, PAST_END, STRADDLES_END, STRADDLES_START, BEFORE_START, ACCESS_DENIED }

    private record Case(Opcode op, Fault fault) {
    }

    @Test
    void violationsFailWithTheirDetailAndTouchNothing() {
        String job = jobId("acc");
        try (RemotePeer child = RemotePeer.start("acc-target", job, base);
             LocalPeer me = LocalPeer.open("acc-initiator", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            // The target: three pages of pattern; only the middle one is registered, four times.
            child.alloc("t", 3 * PAGE);
            child.fill("t", 0, 3 * PAGE, TARGET_SEED);
            MrInfo all = child.register("all", "t", PAGE, PAGE, Access.ALL);
            MrInfo noWrite = child.register("noW", "t", PAGE, PAGE, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC);
            MrInfo noRead = child.register("noR", "t", PAGE, PAGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC);
            MrInfo noAtomic = child.register("noA", "t", PAGE, PAGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            child.alloc("r", PAGE);
            child.fill("r", 0, PAGE, RECV_SEED);
            child.register("rx", "r", 0, PAGE, Access.LOCAL_WRITE);
            assertEquals(all.address(), noWrite.address());
            Set<Long> realKeys = Set.of(all.rkey(), noWrite.rkey(), noRead.rkey(), noAtomic.rkey(),
                    all.lkey(), noWrite.lkey(), noRead.lkey(), noAtomic.lkey());

            me.alloc("b", 2 * PAGE);
            me.fill("b", 0, 2 * PAGE, LOCAL_SEED);
            me.register("mr", "b", 0, 2 * PAGE, Access.ALL);

            List<Case> cases = new ArrayList<>();
            for (Opcode op : List.of(Opcode.RDMA_WRITE, Opcode.RDMA_WRITE_WITH_IMM, Opcode.RDMA_READ,
                    Opcode.ATOMIC_FETCH_ADD, Opcode.ATOMIC_CMP_SWAP)) {
                for (Fault f : Fault.values()) {
                    boolean atomicOnly = f == Fault.BEFORE_START;
                    boolean straddle = f == Fault.STRADDLES_END || f == Fault.STRADDLES_START;
                    if (op.isAtomic() ? straddle : atomicOnly) {
                        continue; // an aligned 8-byte atomic cannot straddle an aligned region boundary
                    }
                    cases.add(new Case(op, f));
                }
            }
            SecureRandom random = new SecureRandom();
            int n = 0;
            for (Case k : cases) {
                String qp = "c" + n++;
                Peer.connectPair(me, qp, child, qp, TINY);
                long rkey = all.rkey();
                long raddr = all.address();
                int len = k.op().isAtomic() ? 8 : 16;
                ErrorDetail expected = ErrorDetail.REMOTE_OUT_OF_BOUNDS;
                switch (k.fault()) {
                    case FORGED_RKEY -> {
                        do {
                            rkey = random.nextLong();
                        } while (rkey == 0 || realKeys.contains(rkey));
                        expected = ErrorDetail.BAD_RKEY;
                    }
                    case PAST_END -> raddr = all.end();
                    case STRADDLES_END -> raddr = all.end() - 4;
                    case STRADDLES_START -> raddr = all.address() - 4;
                    case BEFORE_START -> raddr = all.address() - 8;
                    case ACCESS_DENIED -> {
                        rkey = switch (k.op()) {
                            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> noWrite.rkey();
                            case RDMA_READ -> noRead.rkey();
                            default -> noAtomic.rkey();
                        };
                        expected = ErrorDetail.REMOTE_ACCESS_DENIED;
                    }
                }
                String what = k + " (raddr 0x" + Long.toHexString(raddr) + ", rkey 0x" + Long.toHexString(rkey)
                        + ", window [0x" + Long.toHexString(all.address()) + ", 0x" + Long.toHexString(all.end()) + "))";
                if (k.op() == Opcode.RDMA_WRITE_WITH_IMM) {
                    child.postRecv(qp, 500, new Sge("rx", 0, (int) PAGE));
                }
                me.set64("b", 3000, SENTINEL);
                Wr wr = Wr.of(k.op(), 1000 + n).remote(raddr, rkey).imm(0x1234).compareAdd(1).swap(2);
                switch (k.op()) {
                    case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> wr.sge("mr", 0, len);
                    case RDMA_READ -> wr.sge("mr", PAGE, len);
                    default -> wr.sge("mr", 3000, 8);
                }
                me.postSend(qp, wr);
                expectError(me, qp, Cq.SEND, 1000 + n, CompletionStatus.REM_ACCESS_ERR, expected);
                assertEquals(new Peer.QpStatus(QpState.ERROR, expected), me.status(qp), what);

                // The errored queue pair flushes new work: a valid write does not reach the target.
                me.postSend(qp, Wr.of(Opcode.RDMA_WRITE, 2000 + n).remote(all.address(), all.rkey()).sge("mr", 0, 16));
                expectError(me, qp, Cq.SEND, 2000 + n, CompletionStatus.WR_FLUSH_ERR, ErrorDetail.FLUSHED);
                expectNoCqe(me, qp, Cq.SEND);

                // Nothing was written into the local buffers of a failed READ or atomic.
                assertEquals(SENTINEL, me.get64("b", 3000), "atomic result buffer after " + what);
                assertPattern(me, "b", 0, PAGE, 16, LOCAL_SEED, "READ destination after " + what);

                if (k.op() == Opcode.RDMA_WRITE_WITH_IMM) {
                    // The receive the write would have consumed ends too: the peer's queue pair is in error.
                    expectError(child, qp, Cq.RECV, 500, CompletionStatus.WR_FLUSH_ERR, ErrorDetail.PEER_QP_ERROR);
                    assertEquals(new Peer.QpStatus(QpState.ERROR, ErrorDetail.PEER_QP_ERROR), child.status(qp));
                }
                me.closeQp(qp);
                child.closeQp(qp);
            }

            // Not one byte of the target region changed, inside the window or in the guard pages around it.
            assertEquals(Payloads.patternCrc(TARGET_SEED, 3 * PAGE), child.crc("t", 0, 3 * PAGE),
                    "target region (guard pages and window) after " + cases.size() + " refused requests");
            assertEquals(Payloads.patternCrc(RECV_SEED, PAGE), child.crc("r", 0, PAGE), "the target's receive buffer");

            // Positive control: the window's own boundaries are usable, and only they change.
            Peer.connectPair(me, "ok", child, "ok", TINY);
            me.write("b", 0, new byte[] {(byte) 0xA1});
            me.write("b", 1, new byte[] {(byte) 0xB2});
            me.postSend("ok", Wr.of(Opcode.RDMA_WRITE, 1).remote(all.address(), all.rkey()).sge("mr", 0, 1));
            expectSuccess(me, "ok", Cq.SEND, 1, CompletionOpcode.RDMA_WRITE, 1);
            me.postSend("ok", Wr.of(Opcode.RDMA_WRITE, 2).remote(all.end() - 1, all.rkey()).sge("mr", 1, 1));
            expectSuccess(me, "ok", Cq.SEND, 2, CompletionOpcode.RDMA_WRITE, 1);
            me.postSend("ok", Wr.of(Opcode.ATOMIC_FETCH_ADD, 3).remote(all.end() - 16, all.rkey()).compareAdd(5)
                    .sge("mr", 3000, 8));
            expectSuccess(me, "ok", Cq.SEND, 3, CompletionOpcode.FETCH_ADD, 8);
            me.postSend("ok", Wr.of(Opcode.RDMA_READ, 4).remote(all.address(), all.rkey()).sge("mr", PAGE, (int) PAGE));
            expectSuccess(me, "ok", Cq.SEND, 4, CompletionOpcode.RDMA_READ, (int) PAGE);
            byte[] window = child.read("t", PAGE, (int) PAGE);
            assertBytes(window, me.read("b", PAGE, (int) PAGE), "the whole window read back");
            assertEquals((byte) 0xA1, window[0]);
            assertEquals((byte) 0xB2, window[(int) PAGE - 1]);
            byte[] expectedWindow = Payloads.pattern(TARGET_SEED, PAGE, (int) PAGE);
            long word = java.nio.ByteBuffer.wrap(expectedWindow, (int) PAGE - 16, 8).order(java.nio.ByteOrder.nativeOrder()).getLong();
            assertEquals(word, me.get64("b", 3000), "FETCH_ADD original value at the window's last words");
            assertEquals(word + 5, child.get64("t", 2 * PAGE - 16));
            assertBytes(java.util.Arrays.copyOfRange(expectedWindow, 1, (int) PAGE - 16),
                    java.util.Arrays.copyOfRange(window, 1, (int) PAGE - 16), "window between the written bytes");
            assertBytes(java.util.Arrays.copyOfRange(expectedWindow, (int) PAGE - 8, (int) PAGE - 1),
                    java.util.Arrays.copyOfRange(window, (int) PAGE - 8, (int) PAGE - 1), "window after the atomic word");
            assertEquals(Payloads.patternCrc(TARGET_SEED, PAGE), child.crc("t", 0, PAGE), "guard page before the window");
            assertPattern(child, "t", 0, 2 * PAGE, (int) PAGE, TARGET_SEED, "guard page after the window");
        }
    }

    @Test
    void aDeregisteredRkeyFailsAtOnceAndNeverComesBack() {
        String job = jobId("dereg");
        try (RemotePeer child = RemotePeer.start("dereg-target", job, base);
             LocalPeer me = LocalPeer.open("dereg-initiator", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            child.alloc("t", 2 * PAGE);
            child.fill("t", 0, 2 * PAGE, TARGET_SEED);
            MrInfo first = child.register("m1", "t", 0, PAGE, Access.ALL);
            me.alloc("b", PAGE);
            me.fill("b", 0, PAGE, LOCAL_SEED);
            me.register("mr", "b", 0, PAGE, Access.ALL);

            // The key works (and is now known to the initiator's executor)...
            Peer.connectPair(me, "q1", child, "q1", TINY);
            me.postSend("q1", Wr.of(Opcode.RDMA_WRITE, 1).remote(first.address(), first.rkey()).sge("mr", 0, 16));
            expectSuccess(me, "q1", Cq.SEND, 1, CompletionOpcode.RDMA_WRITE, 16);
            assertBytes(Payloads.pattern(LOCAL_SEED, 16), child.read("t", 0, 16), "write before deregistration");

            // ...until the child deregisters: the very next request with it fails, and writes nothing.
            child.deregister("m1");
            me.fill("b", 0, 16, 99);
            me.postSend("q1", Wr.of(Opcode.RDMA_WRITE, 2).remote(first.address(), first.rkey()).sge("mr", 0, 16));
            expectError(me, "q1", Cq.SEND, 2, CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
            assertEquals(QpState.ERROR, me.status("q1").state());
            assertBytes(Payloads.pattern(LOCAL_SEED, 16), child.read("t", 0, 16), "target after the refused write");

            // A new registration of the same range gets a new key; the old one stays dead, for READ too.
            MrInfo second = child.register("m2", "t", 0, PAGE, Access.ALL);
            assertNotEquals(first.rkey(), second.rkey());
            Peer.connectPair(me, "q2", child, "q2", TINY);
            me.postSend("q2", Wr.of(Opcode.RDMA_READ, 3).remote(first.address(), first.rkey()).sge("mr", 0, 16));
            expectError(me, "q2", Cq.SEND, 3, CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
            assertPattern(me, "b", 0, 0, 16, 99, "READ destination after the refused read");
            Peer.connectPair(me, "q3", child, "q3", TINY);
            me.postSend("q3", Wr.of(Opcode.RDMA_WRITE, 4).remote(second.address(), second.rkey()).sge("mr", 0, 16));
            expectSuccess(me, "q3", Cq.SEND, 4, CompletionOpcode.RDMA_WRITE, 16);
            assertBytes(Payloads.pattern(99, 16), child.read("t", 0, 16), "write with the new key");
            assertPattern(child, "t", 0, 16, (int) (2 * PAGE - 16), TARGET_SEED, "rest of the target region");
        }
    }

    @Test
    void aMisalignedAtomicIsRefusedAtPostAndChangesNothing() {
        String job = jobId("align");
        try (RemotePeer child = RemotePeer.start("align-target", job, base);
             LocalPeer me = LocalPeer.open("align-initiator", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            child.alloc("t", PAGE);
            MrInfo t = child.register("m", "t", 0, PAGE, Access.ALL);
            me.alloc("b", PAGE);
            me.register("mr", "b", 0, PAGE, Access.ALL);
            Peer.connectPair(me, "q", child, "q", TINY);
            child.set64("t", 8, 41);
            PeerException e = assertThrows(PeerException.class, () -> me.postSend("q",
                    Wr.of(Opcode.ATOMIC_FETCH_ADD, 1).remote(t.address() + 4, t.rkey()).compareAdd(1).sge("mr", 0, 8)));
            assertTrue(e.getMessage().contains("8-byte aligned"), e.getMessage());
            assertEquals(QpState.READY, me.status("q").state());
            expectNoCqe(me, "q", Cq.SEND);
            me.postSend("q", Wr.of(Opcode.ATOMIC_FETCH_ADD, 2).remote(t.address() + 8, t.rkey()).compareAdd(1).sge("mr", 0, 8));
            expectSuccess(me, "q", Cq.SEND, 2, CompletionOpcode.FETCH_ADD, 8);
            assertEquals(41, me.get64("b", 0));
            assertEquals(42, child.get64("t", 8));
            awaitTrue("the peer stays READY", NO_HANG, () -> child.status("q").state() == QpState.READY);
        }
    }
}
