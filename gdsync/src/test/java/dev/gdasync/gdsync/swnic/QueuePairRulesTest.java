package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.Descriptors;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.HostStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static dev.gdasync.gdsync.swnic.NicPair.assertEmpty;
import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Prepare order, CQE order, prepared waits holding CQEs, queue limits and bad arguments. */
class QueuePairRulesTest {
    @TempDir
    Path base;
    private NicPair p;

    @BeforeEach
    void open() {
        p = new NicPair(NicPair.config(base), new QueuePairConfig(8, 8, 8), 64 * 1024, Access.ALL, Access.ALL);
    }

    @AfterEach
    void close() {
        p.close();
    }

    private SendWorkRequest send8(long wrId) {
        return new SendWorkRequest().wrId(wrId).sge(p.ma, 0, 8);
    }

    private void postRecvs(int n) {
        for (int i = 0; i < n; i++) {
            p.qb.postRecv(new RecvWorkRequest().wrId(i).sge(p.mb, i * 8L, 8));
        }
    }

    @Test
    void preparedSendsRunOnlyWhenRung() {
        postRecvs(1);
        SendRequest s = p.qa.prepareSend(send8(1));
        assertEquals(SendRequest.State.PREPARED, s.state());
        assertFalse(s.isExecuted());
        assertEmpty(p.qb.recvCq());
        Descriptors.postOnCpu(List.of(new Descriptor.Send(s)), WaitPolicy.defaults());
        assertTrue(s.isExecuted());
        assertEquals(SendRequest.State.POSTED, s.state());
        assertTrue(awaitOne(p.qb.recvCq()).isSuccess());
    }

    @Test
    void sendsPostedOutOfPrepareOrderAreRefusedAndNothingChanges() {
        postRecvs(2);
        SendRequest first = p.qa.prepareSend(send8(1));
        SendRequest second = p.qa.prepareSend(send8(2));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Descriptors.post(List.of(new Descriptor.Send(second)), Descriptors.CPU));
        assertTrue(e.getMessage().contains("out of prepare order"), e.getMessage());
        assertEquals(SendRequest.State.PREPARED, second.state());
        // Both in one list in the wrong order: refused as a whole.
        assertThrows(IllegalStateException.class,
                () -> Descriptors.post(List.of(new Descriptor.Send(second), new Descriptor.Send(first)), Descriptors.CPU));
        assertEquals(SendRequest.State.PREPARED, first.state());
        Descriptors.postOnCpu(List.of(new Descriptor.Send(first), new Descriptor.Send(second)), WaitPolicy.defaults());
        assertEquals(1, awaitOne(p.qa.sendCq()).wrId());
        assertEquals(2, awaitOne(p.qa.sendCq()).wrId());
    }

    @Test
    void aRequestIsPostedOnce() {
        postRecvs(1);
        SendRequest s = p.qa.prepareSend(send8(1));
        Descriptors.postOnCpu(List.of(new Descriptor.Send(s)), WaitPolicy.defaults());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Descriptors.post(List.of(new Descriptor.Send(s)), Descriptors.CPU));
        assertTrue(e.getMessage().contains("already posted"), e.getMessage());
    }

    @Test
    void cpuPostWithPreparedSendsPendingIsRefused() {
        postRecvs(2);
        SendRequest s = p.qa.prepareSend(send8(1));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> p.qa.postSend(send8(2)));
        assertTrue(e.getMessage().contains("prepared sends not yet posted"), e.getMessage());
        Descriptors.postOnCpu(List.of(new Descriptor.Send(s)), WaitPolicy.defaults());
        p.qa.postSend(send8(2));
        assertEquals(1, awaitOne(p.qa.sendCq()).wrId());
        assertEquals(2, awaitOne(p.qa.sendCq()).wrId());
    }

    @Test
    void sendsOfOneQueuePairStayOnOneStreamUntilRung() {
        postRecvs(2);
        try (HostStream one = HostStream.create("one"); HostStream two = HostStream.create("two")) {
            one.post(dev.gdasync.gdsync.memop.MemopBatch.of(new dev.gdasync.gdsync.memop.Memop.Wait32(
                    dev.gdasync.gdsync.memop.MemoryWord.word32(p.sa(), 4096, "gate"), 1,
                    dev.gdasync.gdsync.memop.WaitCondition.EQ)));
            SendRequest a = p.qa.prepareSend(send8(1));
            SendRequest b = p.qa.prepareSend(send8(2));
            one.post(List.of(new Descriptor.Send(a)));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> two.post(List.of(new Descriptor.Send(b))));
            assertTrue(e.getMessage().contains("not rung yet"), e.getMessage());
            p.sa().set(java.lang.foreign.ValueLayout.JAVA_INT, 4096, 1);
            one.synchronize();
            two.post(List.of(new Descriptor.Send(b)));
            two.synchronize();
            assertEquals(1, awaitOne(p.qa.sendCq()).wrId());
            assertEquals(2, awaitOne(p.qa.sendCq()).wrId());
        }
    }

    @Test
    void aPreparedWaitHoldsItsCqeUntilReleased() {
        postRecvs(1);
        WaitRequest w = p.qb.prepareWaitCq(p.qb.recvCq());
        p.qa.postSend(send8(1));
        assertTrue(w.isSatisfied(), "the CQE arrived");
        assertEmpty(p.qb.recvCq());
        HostMemops.execute(w.memops(), WaitPolicy.defaults());
        assertEquals(0, awaitOne(p.qb.recvCq()).wrId());
    }

    @Test
    void releaseOnCpuLetsThePollReapWithoutAnExecutor() {
        postRecvs(1);
        WaitRequest w = p.qb.prepareWaitCq(p.qb.recvCq());
        p.qa.postSend(send8(1));
        assertEmpty(p.qb.recvCq());
        w.releaseOnCpu();
        assertTrue(awaitOne(p.qb.recvCq()).isSuccess());
    }

    @Test
    void waitsFollowCqeOrderAndNeedWorkThatProducesThem() {
        IllegalStateException none = assertThrows(IllegalStateException.class, () -> p.qb.prepareWaitCq(p.qb.recvCq()));
        assertTrue(none.getMessage().contains("no work will produce it"), none.getMessage());
        IllegalStateException noSend = assertThrows(IllegalStateException.class, () -> p.qa.prepareWaitCq(p.qa.sendCq()));
        assertTrue(noSend.getMessage().contains("signaled sends"), noSend.getMessage());

        postRecvs(2);
        WaitRequest w0 = p.qb.prepareWaitCq(p.qb.recvCq());
        WaitRequest w1 = p.qb.prepareWaitCq(p.qb.recvCq());
        assertEquals(0, w0.index());
        assertEquals(1, w1.index());
        assertThrows(IllegalStateException.class, () -> p.qb.prepareWaitCq(p.qb.recvCq()));
    }

    @Test
    void aReservedWaitHoldsItsCqeUntilReleasedByIndexOrMadeLater() {
        postRecvs(3);
        CompletionQueue cq = p.qb.recvCq();
        long r0 = cq.reserveWait();
        long r1 = cq.reserveWait();
        assertEquals(0, r0);
        assertEquals(1, r1);
        IllegalArgumentException notReserved = assertThrows(IllegalArgumentException.class, () -> cq.waitFor(2));
        assertTrue(notReserved.getMessage().contains("not reserved"), notReserved.getMessage());
        assertThrows(IllegalArgumentException.class, () -> cq.releaseOnCpu(2));
        p.qa.postSend(send8(1));
        p.qa.postSend(send8(2));
        Completion c = new Completion();
        assertEquals(0, pollFor(cq, c, 200), "a reserved CQE was reaped before its release");
        cq.releaseOnCpu(r0);
        assertEquals(0, awaitOne(cq).wrId());
        // The second reservation becomes a wait object only now, as a stream taking it would make it.
        WaitRequest w1 = cq.waitFor(r1);
        assertEquals(1, w1.index());
        assertEquals(0, pollFor(cq, c, 200), "the CQE of a made wait was reaped before its executor passed it");
        HostMemops.execute(w1.memops(), WaitPolicy.defaults());
        assertEquals(1, awaitOne(cq).wrId());
        // Cancelling a wait made from the last reservation takes the reservation back.
        long r2 = cq.reserveWait();
        cq.waitFor(r2).cancel();
        assertEquals(r2, cq.reserveWait());
    }

    /** Polls for a while; @return 1 if a CQE was reaped */
    private static int pollFor(CompletionQueue cq, Completion c, long millis) {
        long end = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() < end) {
            if (cq.poll(c) == 1) {
                return 1;
            }
            Thread.onSpinWait();
        }
        return 0;
    }

    @Test
    void aWaitCannotBePreparedForACqeThePollAlreadyReaped() {
        postRecvs(2);
        p.qa.postSend(send8(1));
        awaitOne(p.qb.recvCq());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> p.qb.prepareWaitCq(p.qb.recvCq()));
        assertTrue(e.getMessage().contains("already reaped"), e.getMessage());
    }

    @Test
    void resyncLetsAPolledQueueStartBeingWaitedOn() {
        postRecvs(3);
        p.qa.postSend(send8(1));
        awaitOne(p.qb.recvCq());
        p.qb.recvCq().resyncWaits();
        WaitRequest w = p.qb.prepareWaitCq(p.qb.recvCq());
        assertEquals(1, w.index());
        IllegalStateException busy = assertThrows(IllegalStateException.class, () -> p.qb.recvCq().resyncWaits());
        assertTrue(busy.getMessage().contains("not reaped yet"), busy.getMessage());
        p.qa.postSend(send8(2));
        HostMemops.execute(w.memops(), WaitPolicy.defaults());
        assertEquals(1, awaitOne(p.qb.recvCq()).wrId());
    }

    @Test
    void waitsOfAnotherQueuePairAreRejected() {
        QueuePair other = p.a.createQueuePair(QueuePairConfig.DEFAULT);
        assertThrows(IllegalArgumentException.class, () -> p.qa.prepareWaitCq(other.recvCq()));
    }

    @Test
    void aFullSendQueueRefusesWithoutChangingAnything() {
        SendRequest[] prepared = new SendRequest[8];
        for (int i = 0; i < 8; i++) {
            prepared[i] = p.qa.prepareSend(send8(i).flags(0));
        }
        assertEquals(0, p.qa.sendQueueFree());
        QueueFullException e = assertThrows(QueueFullException.class, () -> p.qa.prepareSend(send8(99)));
        assertTrue(e.getMessage().contains("send queue of QP"), e.getMessage());
        assertEquals(0, p.qa.sendQueueFree());
        postRecvs(8);
        Descriptors.postOnCpu(List.of(new Descriptor.Send(prepared[0]), new Descriptor.Send(prepared[1])), WaitPolicy.defaults());
        assertEquals(2, p.qa.sendQueueFree(), "executed requests free their entries");
    }

    @Test
    void signaledSendsAreBoundByTheSendCompletionQueue() {
        postRecvs(8);
        for (int i = 0; i < 7; i++) {
            p.qa.postSend(send8(i));
        }
        QueueFullException e = assertThrows(QueueFullException.class, () -> p.qa.postSend(send8(7)));
        assertTrue(e.getMessage().contains("send CQ"), e.getMessage());
        awaitOne(p.qa.sendCq());
        p.qa.postSend(send8(7));
    }

    @Test
    void aFullReceiveQueueRefusesUntilReaped() {
        postRecvs(8);
        assertEquals(0, p.qb.recvQueueFree());
        assertThrows(QueueFullException.class, () -> p.qb.postRecv(new RecvWorkRequest().sge(p.mb, 0, 8)));
        p.qa.postSend(send8(1));
        awaitOne(p.qb.recvCq());
        assertEquals(1, p.qb.recvQueueFree());
    }

    @Test
    void ringsWrapAroundManyTimes() {
        Completion c = new Completion();
        for (long i = 0; i < 1000; i++) {
            p.qb.postRecv(new RecvWorkRequest().wrId(i).sge(p.mb, 0, 8));
            p.sa().set(JAVA_LONG, 0, i);
            p.qa.postSend(send8(i));
            c = awaitOne(p.qb.recvCq());
            assertEquals(i, c.wrId());
            assertEquals(i, c.index());
            assertEquals(i, p.sb().get(JAVA_LONG, 0));
            assertEquals(i, awaitOne(p.qa.sendCq()).wrId());
        }
    }

    @Test
    void badSendArgumentsAreRefusedPreciselyAndChangeNothing() {
        MemoryRegion readOnly = p.a.register(p.ra, 0, 4096, 0);
        SendWorkRequest[] bad = {
            send8(1).flags(1 << 7),
            new SendWorkRequest().flags(SendFlags.INLINE | SendFlags.SIGNALED).sge(p.ma, 0, 193),
            new SendWorkRequest().opcode(Opcode.RDMA_READ).flags(SendFlags.INLINE).sge(p.ma, 0, 8),
            new SendWorkRequest().opcode(Opcode.ATOMIC_FETCH_ADD).sge(p.ma, 0, 4).remote(p.mb.address(), p.mb.rkey()),
            new SendWorkRequest().opcode(Opcode.ATOMIC_FETCH_ADD).sge(p.ma, 0, 8).remote(p.mb.address() + 4, p.mb.rkey()),
            new SendWorkRequest().sge(p.ma.address(), 8, 0xdeadbeefL),
            new SendWorkRequest().sge(p.ma, p.ma.length() - 4, 8),
            new SendWorkRequest().opcode(Opcode.RDMA_READ).sge(readOnly, 0, 8).remote(p.mb.address(), p.mb.rkey()),
        };
        String[] expected = {"unknown send flags", "inline limit", "INLINE applies", "exactly one 8-byte",
            "not 8-byte aligned", "matches no live memory region", "is outside", "lacks LOCAL_WRITE"};
        for (int i = 0; i < bad.length; i++) {
            SendWorkRequest wr = bad[i];
            int free = p.qa.sendQueueFree();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.qa.postSend(wr), wr.toString());
            assertTrue(e.getMessage().contains(expected[i]), "case " + i + ": " + e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> p.qa.prepareSend(wr));
            assertEquals(free, p.qa.sendQueueFree());
        }
        assertEquals(QpState.READY, p.qa.state());
        assertEmpty(p.qa.sendCq());
    }

    @Test
    void badReceiveArgumentsAreRefusedPrecisely() {
        MemoryRegion noWrite = p.b.register(p.rb, 0, 4096, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> p.qb.postRecv(new RecvWorkRequest().sge(noWrite, 0, 8)));
        assertTrue(e.getMessage().contains("lacks LOCAL_WRITE"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> p.qb.postRecv(new RecvWorkRequest().sge(p.mb.address(), 8, 42L)));
        assertThrows(IllegalArgumentException.class, () -> p.qb.postRecv(new RecvWorkRequest().sge(p.mb, p.mb.length(), 1)));
        assertEquals(8, p.qb.recvQueueFree());
    }

    @Test
    void connectionErrorsArePrecise() {
        QueuePair fresh = p.a.createQueuePair(QueuePairConfig.DEFAULT);
        IllegalStateException notConnected = assertThrows(IllegalStateException.class, () -> fresh.postSend(send8(1)));
        assertTrue(notConnected.getMessage().contains("not connected"), notConnected.getMessage());
        fresh.postRecv(new RecvWorkRequest().sge(p.ma, 0, 8)); // receives may be posted before connecting
        assertThrows(IllegalArgumentException.class, () -> fresh.connect(fresh.endpoint()));
        assertThrows(IllegalArgumentException.class, () -> fresh.connect(Endpoint.of(new byte[] {1, 2, 3})));
        assertThrows(IllegalStateException.class, () -> p.qa.connect(fresh.endpoint()));
        fresh.close();
        fresh.close();
        assertEquals(QpState.CLOSED, fresh.state());
        assertThrows(IllegalStateException.class, () -> fresh.postRecv(new RecvWorkRequest().sge(p.ma, 0, 8)));
    }

    @Test
    void aSendBeforeThePeerConnectsWaitsForIt() {
        QueuePair x = p.a.createQueuePair(QueuePairConfig.DEFAULT);
        QueuePair y = p.b.createQueuePair(QueuePairConfig.DEFAULT);
        x.connect(y.endpoint());
        y.postRecv(new RecvWorkRequest().wrId(5).sge(p.mb, 0, 8));
        x.postSend(send8(1));
        assertEmpty(x.sendCq());
        y.connect(x.endpoint());
        assertTrue(awaitOne(x.sendCq()).isSuccess());
        assertEquals(5, awaitOne(y.recvCq()).wrId());
    }
}
