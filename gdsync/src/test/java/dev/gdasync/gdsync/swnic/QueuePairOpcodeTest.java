package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static dev.gdasync.gdsync.swnic.NicPair.assertEmpty;
import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every opcode between two in-process NICs, with payload checks. */
public class QueuePairOpcodeTest {
    /** Each side's region. */
    protected static final int REGION = 1 << 20;

    @TempDir
    protected Path base;
    protected NicPair p;

    /** @return the NICs' settings; {@link UcxQueuePairOpcodeTest} runs every test over UCX */
    SwNicConfig config() {
        return NicPair.config(base);
    }

    /** @return the two connected NICs every test runs between; another provider's test gives its own */
    protected NicPair newPair() {
        return new NicPair(config(), QueuePairConfig.DEFAULT, REGION, Access.ALL, Access.ALL);
    }

    @BeforeEach
    void open() {
        p = newPair();
    }

    @AfterEach
    void close() {
        p.close();
    }

    private static void pattern(MemorySegment s, long off, int len, int seed) {
        for (int i = 0; i < len; i++) {
            s.set(JAVA_BYTE, off + i, (byte) (seed + i * 31));
        }
    }

    private static byte[] bytes(MemorySegment s, long off, int len) {
        return s.asSlice(off, len).toArray(JAVA_BYTE);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 8, 63, 64, 4096, 65537, 1 << 19})
    void sendDeliversPayloadIntoThePostedReceive(int len) {
        pattern(p.sa(), 0, len, 7);
        p.qb.postRecv(new RecvWorkRequest().wrId(42).sge(p.mb, 1000, Math.max(len, 1)));
        p.qa.postSend(new SendWorkRequest().wrId(9).sge(p.ma, 0, len));

        Completion s = awaitOne(p.qa.sendCq());
        assertTrue(s.isSuccess(), s.toString());
        assertEquals(9, s.wrId());
        assertEquals(CompletionOpcode.SEND, s.opcode());
        Completion r = awaitOne(p.qb.recvCq());
        assertTrue(r.isSuccess(), r.toString());
        assertEquals(42, r.wrId());
        assertEquals(CompletionOpcode.RECV, r.opcode());
        assertEquals(len, r.byteLength());
        assertFalse(r.hasImmediate());
        assertArrayEquals(bytes(p.sa(), 0, len), bytes(p.sb(), 1000, len));
    }

    @Test
    void sendGathersAndReceiveScatters() {
        pattern(p.sa(), 0, 10, 1);
        pattern(p.sa(), 500, 20, 2);
        pattern(p.sa(), 900, 5, 3);
        p.qb.postRecv(new RecvWorkRequest().wrId(1).sge(p.mb, 100, 7).sge(p.mb, 200, 13).sge(p.mb, 300, 100));
        p.qa.postSend(new SendWorkRequest().sge(p.ma, 0, 10).sge(p.ma, 500, 20).sge(p.ma, 900, 5));

        Completion r = awaitOne(p.qb.recvCq());
        assertEquals(35, r.byteLength());
        byte[] sent = new byte[35];
        System.arraycopy(bytes(p.sa(), 0, 10), 0, sent, 0, 10);
        System.arraycopy(bytes(p.sa(), 500, 20), 0, sent, 10, 20);
        System.arraycopy(bytes(p.sa(), 900, 5), 0, sent, 30, 5);
        byte[] got = new byte[35];
        System.arraycopy(bytes(p.sb(), 100, 7), 0, got, 0, 7);
        System.arraycopy(bytes(p.sb(), 200, 13), 0, got, 7, 13);
        System.arraycopy(bytes(p.sb(), 300, 15), 0, got, 20, 15);
        assertArrayEquals(sent, got);
        assertEquals(0, p.sb().get(JAVA_BYTE, 315), "nothing written past the message");
    }

    @Test
    void sendWithImmediateDeliversTheImmediate() {
        p.qb.postRecv(new RecvWorkRequest().wrId(5).sge(p.mb, 0, 64));
        p.qa.postSend(new SendWorkRequest().opcode(Opcode.SEND_WITH_IMM).immediate(0xCAFEBABE).sge(p.ma, 0, 16));
        Completion r = awaitOne(p.qb.recvCq());
        assertTrue(r.hasImmediate());
        assertEquals(0xCAFEBABE, r.immediate());
        assertEquals(16, r.byteLength());
        assertEquals(CompletionOpcode.RECV, r.opcode());
    }

    @Test
    void receivesAreConsumedInPostOrder() {
        for (int i = 0; i < 5; i++) {
            p.qb.postRecv(new RecvWorkRequest().wrId(100 + i).sge(p.mb, i * 64L, 64));
        }
        // A source buffer per send: as on an RDMA NIC, a send's buffer may be reused only after its completion.
        for (int i = 0; i < 5; i++) {
            p.sa().set(JAVA_LONG, i * 64L, i);
            p.qa.postSend(new SendWorkRequest().wrId(i).sge(p.ma, i * 64L, 8));
        }
        for (int i = 0; i < 5; i++) {
            Completion r = awaitOne(p.qb.recvCq());
            assertEquals(100 + i, r.wrId());
            assertEquals(i, p.sb().get(JAVA_LONG, i * 64L));
            assertEquals(i, awaitOne(p.qa.sendCq()).wrId());
        }
    }

    @Test
    void rdmaWriteLandsAtTheRemoteAddressWithoutAReceive() {
        pattern(p.sa(), 0, 300, 11);
        p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).wrId(3).sge(p.ma, 0, 300)
                .remote(p.mb.address() + 4096, p.mb.rkey()));
        Completion s = awaitOne(p.qa.sendCq());
        assertTrue(s.isSuccess(), s.toString());
        assertEquals(CompletionOpcode.RDMA_WRITE, s.opcode());
        assertArrayEquals(bytes(p.sa(), 0, 300), bytes(p.sb(), 4096, 300));
        assertEmpty(p.qb.recvCq());
    }

    @Test
    void rdmaWriteWithImmediateConsumesAReceive() {
        p.qb.postRecv(new RecvWorkRequest().wrId(77).sge(p.mb, 0, 8));
        pattern(p.sa(), 0, 1000, 5);
        p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE_WITH_IMM).immediate(1234).sge(p.ma, 0, 1000)
                .remote(p.mb.address() + 8192, p.mb.rkey()));
        Completion r = awaitOne(p.qb.recvCq());
        assertEquals(77, r.wrId());
        assertEquals(CompletionOpcode.RECV_RDMA_WITH_IMM, r.opcode());
        assertEquals(1000, r.byteLength());
        assertEquals(1234, r.immediate());
        assertArrayEquals(bytes(p.sa(), 0, 1000), bytes(p.sb(), 8192, 1000));
        assertEquals(0, p.sb().get(JAVA_LONG, 0), "the receive's own buffer is not written");
    }

    @Test
    void rdmaReadFetchesRemoteBytes() {
        pattern(p.sb(), 2048, 777, 9);
        p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_READ).wrId(8).sge(p.ma, 100, 700).sge(p.ma, 5000, 77)
                .remote(p.mb.address() + 2048, p.mb.rkey()));
        Completion s = awaitOne(p.qa.sendCq());
        assertTrue(s.isSuccess(), s.toString());
        assertEquals(CompletionOpcode.RDMA_READ, s.opcode());
        assertEquals(777, s.byteLength());
        assertArrayEquals(bytes(p.sb(), 2048, 700), bytes(p.sa(), 100, 700));
        assertArrayEquals(bytes(p.sb(), 2748, 77), bytes(p.sa(), 5000, 77));
    }

    @Test
    void fetchAddReturnsTheOriginalAndAdds() {
        p.sb().set(JAVA_LONG, 64, 1000);
        p.qa.postSend(new SendWorkRequest().opcode(Opcode.ATOMIC_FETCH_ADD).compareAdd(5).sge(p.ma, 8, 8)
                .remote(p.mb.address() + 64, p.mb.rkey()));
        Completion s = awaitOne(p.qa.sendCq());
        assertTrue(s.isSuccess(), s.toString());
        assertEquals(CompletionOpcode.FETCH_ADD, s.opcode());
        assertEquals(1000, p.sa().get(JAVA_LONG, 8));
        assertEquals(1005, p.sb().get(JAVA_LONG, 64));
    }

    @Test
    void compareAndSwapSwapsOnlyOnAMatch() {
        p.sb().set(JAVA_LONG, 128, 7);
        p.qa.postSend(new SendWorkRequest().opcode(Opcode.ATOMIC_CMP_SWAP).compareAdd(6).swap(99).sge(p.ma, 0, 8)
                .remote(p.mb.address() + 128, p.mb.rkey()));
        assertTrue(awaitOne(p.qa.sendCq()).isSuccess());
        assertEquals(7, p.sa().get(JAVA_LONG, 0), "original returned");
        assertEquals(7, p.sb().get(JAVA_LONG, 128), "no swap on a mismatch");

        p.qa.postSend(new SendWorkRequest().opcode(Opcode.ATOMIC_CMP_SWAP).compareAdd(7).swap(99).sge(p.ma, 0, 8)
                .remote(p.mb.address() + 128, p.mb.rkey()));
        Completion s = awaitOne(p.qa.sendCq());
        assertEquals(CompletionOpcode.COMP_SWAP, s.opcode());
        assertEquals(7, p.sa().get(JAVA_LONG, 0));
        assertEquals(99, p.sb().get(JAVA_LONG, 128));
    }

    @Test
    void inlineSendCapturesThePayloadAtPostTime() {
        p.sa().set(JAVA_LONG, 0, 0x1111);
        // Prepared, not rung: the buffer changes before the ring, the message must not.
        var prepared = p.qa.prepareSend(new SendWorkRequest().flags(SendFlags.INLINE | SendFlags.SIGNALED).sge(p.ma, 0, 8));
        p.sa().set(JAVA_LONG, 0, 0x2222);
        p.qb.postRecv(new RecvWorkRequest().sge(p.mb, 0, 8));
        dev.gdasync.gdsync.descriptor.Descriptors.postOnCpu(
                java.util.List.of(new dev.gdasync.gdsync.descriptor.Descriptor.Send(prepared)),
                dev.gdasync.gdsync.memop.WaitPolicy.defaults());
        assertTrue(awaitOne(p.qb.recvCq()).isSuccess());
        assertEquals(0x1111, p.sb().get(JAVA_LONG, 0));
    }

    @Test
    void unsignaledSendsWriteNoCompletionButSignaledOnesDo() {
        for (int i = 0; i < 6; i++) {
            p.qb.postRecv(new RecvWorkRequest().wrId(i).sge(p.mb, i * 8L, 8));
        }
        for (int i = 0; i < 6; i++) {
            p.sa().set(JAVA_LONG, i * 8L, i * 10); // a buffer per send: an unsignaled one never says it is done
            p.qa.postSend(new SendWorkRequest().wrId(i).flags(i % 3 == 2 ? SendFlags.SIGNALED : 0).sge(p.ma, i * 8L, 8));
        }
        assertEquals(2, awaitOne(p.qa.sendCq()).wrId());
        assertEquals(5, awaitOne(p.qa.sendCq()).wrId());
        assertEmpty(p.qa.sendCq());
        for (int i = 0; i < 6; i++) {
            assertEquals(i, awaitOne(p.qb.recvCq()).wrId());
            assertEquals(i * 10, p.sb().get(JAVA_LONG, i * 8L));
        }
    }

    @Test
    void bothDirectionsWorkOnOneQueuePair() {
        p.qa.postRecv(new RecvWorkRequest().wrId(1).sge(p.ma, 0, 8));
        p.qb.postRecv(new RecvWorkRequest().wrId(2).sge(p.mb, 0, 8));
        p.sa().set(JAVA_LONG, 64, 11);
        p.sb().set(JAVA_LONG, 64, 22);
        p.qa.postSend(new SendWorkRequest().sge(p.ma, 64, 8));
        p.qb.postSend(new SendWorkRequest().sge(p.mb, 64, 8));
        assertEquals(2, awaitOne(p.qb.recvCq()).wrId());
        assertEquals(1, awaitOne(p.qa.recvCq()).wrId());
        assertEquals(11, p.sb().get(JAVA_LONG, 0));
        assertEquals(22, p.sa().get(JAVA_LONG, 0));
    }
}
