package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static dev.gdasync.gdsync.swnic.NicPair.assertEmpty;
import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every opcode of {@link QueuePairOpcodeTest}, between two NICs that reach each other over UCX. */
class UcxQueuePairOpcodeTest extends QueuePairOpcodeTest {
    @BeforeAll
    static void requireUcx() {
        NicPair.assumeUcx();
    }

    @Override
    SwNicConfig config() {
        return super.config().withTransport(Transport.UCX);
    }

    /**
     * As the parent's, but each send has a source buffer of its own: over UCX a send runs after its post
     * returns, so (as on an RDMA NIC) a buffer may be reused only after the send's completion. The shared-memory
     * transport copies at post time, which the parent's version relies on.
     */
    @Override
    @Test
    void receivesAreConsumedInPostOrder() {
        for (int i = 0; i < 5; i++) {
            p.qb.postRecv(new RecvWorkRequest().wrId(100 + i).sge(p.mb, i * 64L, 64));
        }
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

    /** As the parent's, with a source buffer per send (see {@link #receivesAreConsumedInPostOrder()}). */
    @Override
    @Test
    void unsignaledSendsWriteNoCompletionButSignaledOnesDo() {
        for (int i = 0; i < 6; i++) {
            p.qb.postRecv(new RecvWorkRequest().wrId(i).sge(p.mb, i * 8L, 8));
        }
        for (int i = 0; i < 6; i++) {
            p.sa().set(JAVA_LONG, i * 8L, i * 10);
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
}
