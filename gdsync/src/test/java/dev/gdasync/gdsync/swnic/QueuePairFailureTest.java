package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.stream.Stream;

import static dev.gdasync.gdsync.swnic.NicPair.assertEmpty;
import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failure semantics (DESIGN.md §6): refused remote accesses complete with an error, move the queue pair
 * to the error state and leave every byte around the target unchanged; broken peers fail what is
 * outstanding.
 */
public class QueuePairFailureTest {
    protected static final int REGION = 64 * 1024;
    private static final long TARGET = 16 * 1024;
    private static final int TARGET_LEN = 4096;
    private static final byte GUARD = (byte) 0xA5;

    @TempDir
    protected Path base;

    /** @return the NICs' settings; {@link UcxQueuePairFailureTest} runs every test over UCX */
    protected SwNicConfig config() {
        return NicPair.config(base);
    }

    /** @return two connected NICs with these settings; another provider's test gives its own */
    protected NicPair pair(SwNicConfig config, int accessA, int accessB) {
        return new NicPair(config, QueuePairConfig.DEFAULT, REGION, accessA, accessB);
    }

    /** A target region of which only the middle is registered, the rest filled with guard bytes. */
    private final class Target implements AutoCloseable {
        final NicPair p;
        final MemoryRegion window;

        Target(NicPair pair, int access) {
            p = pair;
            p.sb().fill(GUARD);
            window = p.b.register(p.rb, TARGET, TARGET_LEN, access);
        }

        void assertUntouched() {
            MemorySegment s = p.sb();
            for (long i = 0; i < REGION; i++) {
                if (s.get(JAVA_BYTE, i) != GUARD) {
                    throw new AssertionError("byte " + i + " of the target region changed");
                }
            }
        }

        @Override
        public void close() {
            p.close();
        }
    }

    static Stream<Arguments> refusedAccesses() {
        // 32 random bits, the top one set: no key of any provider (64-bit or 32-bit keys) is it, but for chance.
        long forged = Integer.toUnsignedLong(new SecureRandom().nextInt() | 1 << 31);
        return Stream.of(
                // opcode, access of the target window, address offset from the window, length, rkey (0 = the window's), detail
                Arguments.of(Opcode.RDMA_WRITE, Access.LOCAL_WRITE | Access.REMOTE_WRITE, 0L, 8, forged, ErrorDetail.BAD_RKEY),
                Arguments.of(Opcode.RDMA_WRITE, Access.LOCAL_WRITE | Access.REMOTE_WRITE, (long) TARGET_LEN, 1, 0L, ErrorDetail.REMOTE_OUT_OF_BOUNDS),
                Arguments.of(Opcode.RDMA_WRITE, Access.LOCAL_WRITE | Access.REMOTE_WRITE, TARGET_LEN - 4L, 8, 0L, ErrorDetail.REMOTE_OUT_OF_BOUNDS),
                Arguments.of(Opcode.RDMA_WRITE, Access.LOCAL_WRITE | Access.REMOTE_WRITE, -8L, 16, 0L, ErrorDetail.REMOTE_OUT_OF_BOUNDS),
                Arguments.of(Opcode.RDMA_WRITE, Access.LOCAL_WRITE | Access.REMOTE_READ, 0L, 8, 0L, ErrorDetail.REMOTE_ACCESS_DENIED),
                Arguments.of(Opcode.RDMA_WRITE_WITH_IMM, Access.LOCAL_WRITE | Access.REMOTE_READ, 0L, 8, 0L, ErrorDetail.REMOTE_ACCESS_DENIED),
                Arguments.of(Opcode.RDMA_READ, Access.LOCAL_WRITE | Access.REMOTE_WRITE, 0L, 8, 0L, ErrorDetail.REMOTE_ACCESS_DENIED),
                Arguments.of(Opcode.RDMA_READ, Access.LOCAL_WRITE | Access.REMOTE_READ, TARGET_LEN - 1L, 2, 0L, ErrorDetail.REMOTE_OUT_OF_BOUNDS),
                Arguments.of(Opcode.ATOMIC_FETCH_ADD, Access.LOCAL_WRITE | Access.REMOTE_WRITE, 0L, 8, 0L, ErrorDetail.REMOTE_ACCESS_DENIED),
                Arguments.of(Opcode.ATOMIC_CMP_SWAP, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC, (long) TARGET_LEN, 8, 0L, ErrorDetail.REMOTE_OUT_OF_BOUNDS),
                Arguments.of(Opcode.ATOMIC_FETCH_ADD, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC, 0L, 8, forged, ErrorDetail.BAD_RKEY));
    }

    @ParameterizedTest
    @MethodSource("refusedAccesses")
    void refusedRemoteAccessFailsAndTouchesNothing(Opcode op, int access, long offset, int len, long rkey, ErrorDetail detail) {
        try (Target t = new Target(pair(config(), Access.ALL, Access.LOCAL_WRITE), access)) {
            NicPair p = t.p;
            if (op == Opcode.RDMA_WRITE_WITH_IMM) {
                p.qb.postRecv(new RecvWorkRequest().sge(p.b.register(p.b.allocateHost(4096), Access.LOCAL_WRITE), 0, 8));
            }
            p.sa().fill((byte) 0x5A);
            p.qa.postSend(new SendWorkRequest().opcode(op).wrId(5).sge(p.ma, 0, op.isAtomic() ? 8 : len)
                    .compareAdd(1).swap(2).remote(t.window.address() + offset, rkey == 0 ? t.window.rkey() : rkey));
            Completion c = awaitOne(p.qa.sendCq());
            assertEquals(CompletionStatus.REM_ACCESS_ERR, c.status(), c.toString());
            assertEquals(detail, c.detail());
            assertEquals(5, c.wrId());
            assertEquals(QpState.ERROR, p.qa.state());
            assertEquals(detail, p.qa.errorDetail());
            t.assertUntouched();
            if (op == Opcode.RDMA_READ) {
                assertEquals((byte) 0x5A, p.sa().get(JAVA_BYTE, 0), "a refused READ writes nothing locally");
            }
        }
    }

    @Test
    void afterAnErrorLaterRequestsAreFlushedAndThePeerFollows() {
        try (NicPair p = pair(config(), Access.ALL, Access.ALL)) {
            p.qa.postRecv(new RecvWorkRequest().wrId(70).sge(p.ma, 0, 8));
            p.qb.postRecv(new RecvWorkRequest().wrId(80).sge(p.mb, 0, 8));
            p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).wrId(1).sge(p.ma, 0, 8).remote(p.mb.address(), 12345L));
            assertEquals(CompletionStatus.REM_ACCESS_ERR, awaitOne(p.qa.sendCq()).status());
            // Our posted receive is flushed at once; a new send is flushed, not executed.
            Completion r = awaitOne(p.qa.recvCq());
            assertEquals(CompletionStatus.WR_FLUSH_ERR, r.status());
            assertEquals(70, r.wrId());
            p.qa.postSend(new SendWorkRequest().wrId(2).sge(p.ma, 0, 8));
            Completion f = awaitOne(p.qa.sendCq());
            assertEquals(CompletionStatus.WR_FLUSH_ERR, f.status());
            assertEquals(2, f.wrId());
            // The peer's agent notices our queue pair in error and fails its own outstanding work.
            Completion pr = awaitOne(p.qb.recvCq());
            assertEquals(CompletionStatus.WR_FLUSH_ERR, pr.status());
            assertEquals(ErrorDetail.PEER_QP_ERROR, pr.detail());
            assertEquals(QpState.ERROR, p.qb.state());
        }
    }

    @Test
    void sendLongerThanTheReceiveFailsAtBothEnds() {
        try (NicPair p = pair(config(), Access.ALL, Access.ALL)) {
            p.sb().fill((byte) 1);
            p.qb.postRecv(new RecvWorkRequest().wrId(3).sge(p.mb, 0, 16));
            p.qa.postSend(new SendWorkRequest().wrId(4).sge(p.ma, 0, 17));
            Completion s = awaitOne(p.qa.sendCq());
            assertEquals(CompletionStatus.REM_INV_REQ_ERR, s.status());
            assertEquals(ErrorDetail.RECV_TOO_SMALL, s.detail());
            Completion r = awaitOne(p.qb.recvCq());
            assertEquals(CompletionStatus.LOC_LEN_ERR, r.status());
            assertEquals(3, r.wrId());
            for (int i = 0; i < 64; i++) {
                assertEquals(1, p.sb().get(JAVA_BYTE, i), "no byte of a refused message lands");
            }
        }
    }

    @Test
    void receiveIntoADeregisteredBufferFailsAtBothEnds() {
        try (NicPair p = pair(config(), Access.ALL, Access.ALL)) {
            Region other = p.b.allocateHost(4096);
            MemoryRegion buf = p.b.register(other, Access.LOCAL_WRITE);
            p.qb.postRecv(new RecvWorkRequest().wrId(6).sge(buf, 0, 64));
            p.b.deregister(buf);
            p.qa.postSend(new SendWorkRequest().sge(p.ma, 0, 8));
            Completion s = awaitOne(p.qa.sendCq());
            assertEquals(CompletionStatus.REM_OP_ERR, s.status());
            assertEquals(ErrorDetail.RECV_BUFFER_INVALID, s.detail());
            Completion r = awaitOne(p.qb.recvCq());
            assertEquals(CompletionStatus.LOC_PROT_ERR, r.status());
            assertEquals(0, other.segment().get(JAVA_LONG, 0));
        }
    }

    @Test
    void sendWithoutAReceiveFailsAfterTheReceiverNotReadyTimeout() {
        SwNicConfig cfg = config().withRnrTimeout(Duration.ofMillis(300));
        try (NicPair p = pair(cfg, Access.ALL, Access.ALL)) {
            long start = System.nanoTime();
            p.qa.postSend(new SendWorkRequest().wrId(11).sge(p.ma, 0, 8));
            assertEmpty(p.qa.sendCq());
            Completion c = awaitOne(p.qa.sendCq());
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(CompletionStatus.RNR_RETRY_EXC_ERR, c.status(), c.toString());
            assertEquals(ErrorDetail.RNR_TIMEOUT, c.detail());
            assertTrue(ms >= 250, "failed after " + ms + " ms, before the 300 ms timeout");
            assertEquals(QpState.ERROR, p.qa.state());
        }
    }

    @Test
    void aReceivePostedWithinTheTimeoutLetsTheStalledSendThrough() throws Exception {
        SwNicConfig cfg = config().withRnrTimeout(Duration.ofSeconds(10));
        try (NicPair p = pair(cfg, Access.ALL, Access.ALL)) {
            p.sa().set(JAVA_LONG, 0, 31337);
            p.qa.postSend(new SendWorkRequest().wrId(12).sge(p.ma, 0, 8));
            Thread.sleep(50);
            assertEmpty(p.qa.sendCq());
            p.qb.postRecv(new RecvWorkRequest().wrId(13).sge(p.mb, 0, 8));
            Completion c = awaitOne(p.qa.sendCq());
            assertTrue(c.isSuccess(), c.toString());
            assertEquals(13, awaitOne(p.qb.recvCq()).wrId());
            assertEquals(31337, p.sb().get(JAVA_LONG, 0));
        }
    }

    @Test
    void aPeerThatClosesFailsOutstandingWorkWithPeerClosed() {
        try (NicPair p = pair(config(), Access.ALL, Access.ALL)) {
            p.qa.postRecv(new RecvWorkRequest().wrId(21).sge(p.ma, 0, 8));
            p.qa.postRecv(new RecvWorkRequest().wrId(22).sge(p.ma, 8, 8));
            p.b.close();
            Completion r1 = awaitOne(p.qa.recvCq());
            Completion r2 = awaitOne(p.qa.recvCq());
            assertEquals(21, r1.wrId());
            assertEquals(22, r2.wrId());
            assertEquals(CompletionStatus.WR_FLUSH_ERR, r1.status());
            assertEquals(ErrorDetail.PEER_CLOSED, r1.detail());
            assertEquals(QpState.ERROR, p.qa.state());
            p.qa.postSend(new SendWorkRequest().wrId(23).sge(p.ma, 0, 8));
            assertEquals(CompletionStatus.WR_FLUSH_ERR, awaitOne(p.qa.sendCq()).status());
        }
    }

    @Test
    void aStalledSendFailsWhenThePeerCloses() {
        SwNicConfig cfg = config().withRnrTimeout(Duration.ofSeconds(30));
        try (NicPair p = pair(cfg, Access.ALL, Access.ALL)) {
            p.qa.postSend(new SendWorkRequest().wrId(31).sge(p.ma, 0, 8));
            p.qb.close();
            Completion c = awaitOne(p.qa.sendCq());
            assertEquals(CompletionStatus.RETRY_EXC_ERR, c.status(), c.toString());
            assertEquals(ErrorDetail.PEER_CLOSED, c.detail());
        }
    }
}
