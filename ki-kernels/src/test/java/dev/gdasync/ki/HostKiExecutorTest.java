package dev.gdasync.ki;

import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.kernels.KiCopy;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiDevice;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiExchangeWork;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The host KI executor over real software-NIC queue pairs in this process: each template end to end with
 * payloads checked, the timeout path, bad input, and launch order. (Between processes: the libmp and
 * pingpong tests.)
 */
class HostKiExecutorTest {
    static final long TIMEOUT = Duration.ofSeconds(10).toNanos();
    static final Duration JOIN = Duration.ofSeconds(60);

    @TempDir
    Path shm;
    Link link;
    Arena arena;
    private final List<HostKiExecutor> executors = new ArrayList<>();

    /** @return the two connected NICs every test runs between; {@link Mlx5HostKiExecutorTest} gives mlx5 ones */
    Link newLink() {
        return new Link(shm, "kiexec");
    }

    @BeforeEach
    void open() {
        link = newLink();
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        executors.forEach(HostKiExecutor::close);
        link.close();
        arena.close();
    }

    HostKiExecutor executor(String name, Link.Side side, boolean ringsOwnWork) {
        HostKiExecutor.Options o = HostKiExecutor.Options.defaults();
        if (ringsOwnWork) {
            o = o.withAfterRing(side.nic::progressStoreRings);
        }
        HostKiExecutor e = HostKiExecutor.create(name, o);
        executors.add(e);
        return e;
    }

    MemorySegment tableMemory(KiTable.Builder b) {
        return arena.allocate(b.byteSize(), 8);
    }

    /** A side's half of a ping-pong: n receives posted, n sends prepared, exported as sends i and waits i. */
    private static KiTable.Builder pingPongTable(Link.Side me, HostKiExecutor ex, int first, int n, int size, long seedBase) {
        for (int i = first; i < first + n; i++) {
            me.qp.postRecv(new RecvWorkRequest().wrId(i).sge(me.mr, recvOffset(i, size), size));
        }
        KiTable.Builder b = KiTable.builder(ex);
        for (int i = first; i < first + n; i++) {
            Link.fill(me.mem().asSlice(sendOffset(i, size), size), seedBase + i);
            SendRequest s = me.qp.prepareSend(new SendWorkRequest().wrId(i).sge(me.mr, sendOffset(i, size), size));
            b.addSend(s);
            b.addWait(me.qp.prepareWaitCq(me.qp.recvCq()));
        }
        return b;
    }

    private static long sendOffset(int i, int size) {
        return (long) i * size;
    }

    private static long recvOffset(int i, int size) {
        return Link.REGION / 2 + (long) i * size;
    }

    @ParameterizedTest(name = "kernel threads run their own rings: {0}")
    @ValueSource(booleans = {true, false})
    void twoPingPongKernelsCarryEveryPayload(boolean ringsOwnWork) {
        int n = 300;
        int size = 256;
        HostKiExecutor ea = executor("a", link.a, ringsOwnWork);
        HostKiExecutor eb = executor("b", link.b, ringsOwnWork);
        KiTable.Builder ba = pingPongTable(link.a, ea, 0, n, size, 1000);
        KiTable.Builder bb = pingPongTable(link.b, eb, 0, n, size, 5000);
        KiTable ta = ba.writeTo(tableMemory(ba));
        KiTable tb = bb.writeTo(tableMemory(bb));
        KiLaunch lb = eb.pingPong(tb, n, false, 0, TIMEOUT);
        KiLaunch la = ea.pingPong(ta, n, true, 2_000, TIMEOUT);
        la.join(JOIN);
        lb.join(JOIN);
        assertTrue(la.isDone() && lb.isDone());
        assertTrue(ta.status().isOk() && tb.status().isOk());
        Link.reap(link.a.qp.sendCq(), n);
        Link.reap(link.b.qp.sendCq(), n);
        List<Completion> ra = Link.reap(link.a.qp.recvCq(), n);
        List<Completion> rb = Link.reap(link.b.qp.recvCq(), n);
        for (int i = 0; i < n; i++) {
            assertEquals(i, ra.get(i).wrId());
            assertEquals(size, rb.get(i).byteLength());
            Link.check(link.b.mem().asSlice(recvOffset(i, size), size), 1000 + i, "b's receive " + i);
            Link.check(link.a.mem().asSlice(recvOffset(i, size), size), 5000 + i, "a's receive " + i);
        }
    }

    @Test
    void launchesOfOneExecutorRunInOrderSoAQueuePairsSendsMaySpanTables() {
        int size = 64;
        HostKiExecutor ea = executor("a", link.a, true);
        HostKiExecutor eb = executor("b", link.b, true);
        // Both tables of each side are exported before either runs: the second continues the first's sends.
        KiTable.Builder a1 = pingPongTable(link.a, ea, 0, 10, size, 100);
        KiTable ta1 = a1.writeTo(tableMemory(a1));
        KiTable.Builder a2 = pingPongTable(link.a, ea, 10, 10, size, 100);
        KiTable ta2 = a2.writeTo(tableMemory(a2));
        KiTable.Builder b1 = pingPongTable(link.b, eb, 0, 10, size, 700);
        KiTable tb1 = b1.writeTo(tableMemory(b1));
        KiTable.Builder b2 = pingPongTable(link.b, eb, 10, 10, size, 700);
        KiTable tb2 = b2.writeTo(tableMemory(b2));
        // Another executor may not take b's next send while b's exported sends are unrung: it could ring first.
        SendRequest next = link.b.qp.prepareSend(new SendWorkRequest().sge(link.b.mr, 0, 8));
        HostKiExecutor other = executor("other", link.b, true);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> KiTable.builder(other).addSend(next));
        assertTrue(e.getMessage().contains("not rung yet"), e.getMessage());
        assertEquals(SendRequest.State.PREPARED, next.state());

        List<KiLaunch> launches = List.of(eb.pingPong(tb1, 10, false, 0, TIMEOUT), eb.pingPong(tb2, 10, false, 0, TIMEOUT),
                ea.pingPong(ta1, 10, true, 0, TIMEOUT), ea.pingPong(ta2, 10, true, 0, TIMEOUT));
        launches.forEach(l -> l.join(JOIN));
        Link.reap(link.a.qp.sendCq(), 20);
        Link.reap(link.b.qp.sendCq(), 20);
        Link.reap(link.a.qp.recvCq(), 20);
        Link.reap(link.b.qp.recvCq(), 20);
        for (int i = 0; i < 20; i++) {
            Link.check(link.b.mem().asSlice(recvOffset(i, size), size), 100 + i, "b's receive " + i);
            Link.check(link.a.mem().asSlice(recvOffset(i, size), size), 700 + i, "a's receive " + i);
        }
    }

    /** Symmetric exchange state of one side: field, send slots, receive slots, halo, interior buffers. */
    private static final int K = 12;
    private static final int CHUNK = 4096;
    private static final long FIELD = 0;
    private static final long SEND = 64 << 10;
    private static final long RECV = 128 << 10;
    private static final long HALO = 192 << 10;
    private static final long INTERIOR_SRC = 256 << 10;
    private static final long INTERIOR_DST = 512 << 10;
    private static final int INTERIOR = 64 << 10;

    private KiTable exchangeTable(Link.Side me, HostKiExecutor ex) {
        for (int j = 0; j < K; j++) {
            me.qp.postRecv(new RecvWorkRequest().wrId(j).sge(me.mr, RECV + (long) j * CHUNK, CHUNK));
        }
        KiTable.Builder b = KiTable.builder(ex);
        for (int i = 0; i < K; i++) {
            b.addSend(me.qp.prepareSend(new SendWorkRequest().wrId(i).sge(me.mr, SEND + (long) i * CHUNK, CHUNK)));
        }
        for (int j = 0; j < K; j++) {
            b.addWait(me.qp.prepareWaitCq(me.qp.recvCq()));
        }
        return b.writeTo(tableMemory(b));
    }

    private static KiCopyWork copyWork(Link.Side me, long interiorNs) {
        MemorySegment m = me.mem();
        List<KiCopy> pack = new ArrayList<>();
        List<KiCopy> unpack = new ArrayList<>();
        for (int i = 0; i < K; i++) {
            pack.add(new KiCopy(m.asSlice(FIELD + (long) i * CHUNK, CHUNK), m.asSlice(SEND + (long) i * CHUNK, CHUNK)));
            unpack.add(new KiCopy(m.asSlice(RECV + (long) i * CHUNK, CHUNK), m.asSlice(HALO + (long) i * CHUNK, CHUNK)));
        }
        KiCopy interior = new KiCopy(m.asSlice(INTERIOR_SRC, INTERIOR), m.asSlice(INTERIOR_DST, INTERIOR));
        return new KiCopyWork(pack, unpack, interior, 16, interiorNs);
    }

    @ParameterizedTest(name = "kernel threads run their own rings: {0}")
    @ValueSource(booleans = {true, false})
    void theExchangePacksSendsReceivesAndUnpacksOnBothSides(boolean ringsOwnWork) {
        HostKiExecutor ea = executor("a", link.a, ringsOwnWork);
        HostKiExecutor eb = executor("b", link.b, ringsOwnWork);
        for (Link.Side s : List.of(link.a, link.b)) {
            long seed = s == link.a ? 10 : 20;
            Link.fill(s.mem().asSlice(FIELD, (long) K * CHUNK), seed);
            Link.fill(s.mem().asSlice(INTERIOR_SRC, INTERIOR), seed + 1);
        }
        KiTable ta = exchangeTable(link.a, ea);
        KiTable tb = exchangeTable(link.b, eb);
        KiLaunch la = ea.exchange(ta, new KiExchange(3, 2, copyWork(link.a, 1_000)), TIMEOUT);
        KiLaunch lb = eb.exchange(tb, new KiExchange(4, 1, copyWork(link.b, 0)), TIMEOUT);
        la.join(JOIN);
        lb.join(JOIN);
        for (Link.Side s : List.of(link.a, link.b)) {
            Link.Side peer = s == link.a ? link.b : link.a;
            long peerSeed = peer == link.a ? 10 : 20;
            Link.reap(s.qp.sendCq(), K);
            Link.reap(s.qp.recvCq(), K);
            MemorySegment halo = s.mem().asSlice(HALO, (long) K * CHUNK);
            Link.check(halo, peerSeed, "the halo unpacked from the peer's field");
            assertEquals(-1, s.mem().asSlice(INTERIOR_SRC, INTERIOR).mismatch(s.mem().asSlice(INTERIOR_DST, INTERIOR)),
                    "every interior chunk copied");
        }
    }

    @Test
    void packPrecedesItsRingAndUnpackFollowsEveryReceive() {
        HostKiExecutor ea = executor("a", link.a, true);
        HostKiExecutor eb = executor("b", link.b, true);
        KiTable ta = exchangeTable(link.a, ea);
        KiTable tb = exchangeTable(link.b, eb);
        AtomicIntegerArray packs = new AtomicIntegerArray(K);
        AtomicIntegerArray unpacks = new AtomicIntegerArray(K);
        AtomicIntegerArray chunks = new AtomicIntegerArray(40);
        List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
        KiExchangeWork work = new KiExchangeWork() {
            @Override
            public void pack(int sendIndex) {
                packs.incrementAndGet(sendIndex);
                // What a pack writes is what its send carries: fill the slot now.
                Link.fill(link.b.mem().asSlice(SEND + (long) sendIndex * CHUNK, CHUNK), 300 + sendIndex);
            }

            @Override
            public int interiorChunks() {
                return 40;
            }

            @Override
            public void interior(int chunk) {
                chunks.incrementAndGet(chunk);
            }

            @Override
            public int unpackCount() {
                return K;
            }

            @Override
            public void unpack(int index) {
                unpacks.incrementAndGet(index);
                MemorySegment got = link.b.mem().asSlice(RECV + (long) index * CHUNK, CHUNK);
                MemorySegment want = arenaCopy(link.a.mem().asSlice(FIELD + (long) index * CHUNK, CHUNK));
                if (got.mismatch(want) != -1) {
                    problems.add("unpack " + index + " ran before its receive's data arrived");
                }
            }
        };
        Link.fill(link.a.mem().asSlice(FIELD, (long) K * CHUNK), 77);
        KiLaunch la = ea.exchange(ta, new KiExchange(2, 1, copyWork(link.a, 0)), TIMEOUT);
        KiLaunch lb = eb.exchange(tb, new KiExchange(3, 3, work), TIMEOUT);
        la.join(JOIN);
        lb.join(JOIN);
        assertEquals(List.of(), problems);
        for (int i = 0; i < K; i++) {
            assertEquals(1, packs.get(i), "pack " + i);
            assertEquals(1, unpacks.get(i), "unpack " + i);
        }
        for (int c = 0; c < 40; c++) {
            assertEquals(1, chunks.get(c), "interior chunk " + c);
        }
        Link.reap(link.a.qp.recvCq(), K);
        for (int i = 0; i < K; i++) {
            Link.check(link.a.mem().asSlice(RECV + (long) i * CHUNK, CHUNK), 300 + i, "a's receive " + i + " of b's packed slot");
        }
    }

    private MemorySegment arenaCopy(MemorySegment src) {
        MemorySegment c = arena.allocate(src.byteSize());
        c.copyFrom(src);
        return c;
    }

    @Test
    void templatedPutsLandWhereTheKernelChoseAndNowhereElse() {
        HostKiExecutor ea = executor("a", link.a, true);
        MemorySegment target = link.b.mem();
        target.asSlice(0, 64 << 10).fill((byte) 0x5A);
        Link.fill(link.a.mem().asSlice(4096, 1000), 9);
        // Prepared with placeholders: the kernel picks source, length and target.
        SendRequest t0 = link.a.qp.prepareSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(link.a.mr, 0, 8)
                .remote(link.b.mr.address(), link.b.mr.rkey()));
        SendRequest t1 = link.a.qp.prepareSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(link.a.mr, 0, 8)
                .remote(link.b.mr.address(), link.b.mr.rkey()));
        KiTable.Builder b = KiTable.builder(ea);
        assertEquals(0, b.addTemplate(t0));
        assertEquals(1, b.addTemplate(t1));
        KiTable table = b.writeTo(tableMemory(b));
        long src = link.a.mr.address() + 4096;
        ea.sendTemplates(table, List.of(
                new KiTemplateArgs(src, 100, link.a.mr.lkey(), link.b.mr.address() + 8192 + 3, link.b.mr.rkey()),
                new KiTemplateArgs(src + 100, 900, link.a.mr.lkey(), link.b.mr.address() + 20000, link.b.mr.rkey())))
                .join(JOIN);
        List<Completion> done = Link.reap(link.a.qp.sendCq(), 2);
        assertEquals(100, done.get(0).byteLength());
        assertEquals(900, done.get(1).byteLength());
        MemorySegment expected = arena.allocate(1000);
        Link.fill(expected, 9);
        assertEquals(-1, target.asSlice(8192 + 3, 100).mismatch(expected.asSlice(0, 100)));
        assertEquals(-1, target.asSlice(20000, 900).mismatch(expected.asSlice(100, 900)));
        assertUntouchedExcept(target, 64 << 10, new long[][]{{8192 + 3, 100}, {20000, 900}});
    }

    @Test
    void aTemplateWithAForgedKeyFailsAtTheNicAndWritesNothing() {
        HostKiExecutor ea = executor("a", link.a, true);
        MemorySegment target = link.b.mem();
        target.asSlice(0, 64 << 10).fill((byte) 0x5A);
        SendRequest t = link.a.qp.prepareSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(link.a.mr, 0, 8)
                .remote(link.b.mr.address(), link.b.mr.rkey()));
        KiTable.Builder b = KiTable.builder(ea);
        b.addTemplate(t);
        KiTable table = b.writeTo(tableMemory(b));
        ea.sendTemplates(table, List.of(new KiTemplateArgs(link.a.mr.address(), 64, link.a.mr.lkey(),
                link.b.mr.address() + 128, link.b.mr.rkey() ^ 0x10))).join(JOIN);
        Completion c = new Completion();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (link.a.qp.sendCq().poll(c) == 0) {
            assertTrue(System.nanoTime() < deadline, "no completion for the forged put");
        }
        assertFalse(c.isSuccess(), c.toString());
        assertEquals(QpState.ERROR, link.a.qp.state());
        assertUntouchedExcept(target, 64 << 10, new long[0][]);
    }

    private static void assertUntouchedExcept(MemorySegment m, long bytes, long[][] written) {
        for (long k = 0; k < bytes; k++) {
            boolean inside = false;
            for (long[] w : written) {
                inside |= k >= w[0] && k < w[0] + w[1];
            }
            if (!inside && m.get(ValueLayout.JAVA_BYTE, k) != 0x5A) {
                fail("byte " + k + " outside the targets changed");
            }
        }
    }

    @Test
    void aWaitThatNeverCompletesEndsTheKernelAndNamesItsDescriptor() {
        HostKiExecutor eb = executor("b", link.b, true);
        link.b.qp.postRecv(new RecvWorkRequest().sge(link.b.mr, 0, 8));
        WaitRequest w = link.b.qp.prepareWaitCq(link.b.qp.recvCq());
        SendRequest reply = link.b.qp.prepareSend(new SendWorkRequest().sge(link.b.mr, 64, 8));
        KiTable.Builder b = KiTable.builder(eb);
        b.addSend(reply);
        b.addWait(w);
        KiTable table = b.writeTo(tableMemory(b));
        long t0 = System.nanoTime();
        KiLaunch l = eb.pingPong(table, 1, false, 0, Duration.ofMillis(200).toNanos());
        KiException e = assertThrows(KiException.class, () -> l.join(JOIN));
        long waited = System.nanoTime() - t0;
        assertEquals("ping-pong on host timed out waiting on wait entry 0 (CQE #0 of recv CQ of QP " + link.b.qp.number() + ")",
                e.getMessage());
        assertNotNull(e.status());
        assertEquals(KiTableLayout.STATUS_TIMEOUT, e.status().code());
        assertTrue(waited >= Duration.ofMillis(200).toNanos(), "ended after its timeout, not before: " + waited);
        assertFalse(reply.isExecuted(), "the responder never replied");
        // The executor is still good for the next launch.
        eb.sendTemplates(table, List.of()).join(JOIN);
    }

    @Test
    void theHostsAbortEndsAWaitLongBeforeItsTimeout() {
        HostKiExecutor eb = executor("b", link.b, true);
        link.b.qp.postRecv(new RecvWorkRequest().sge(link.b.mr, 0, 8));
        WaitRequest w = link.b.qp.prepareWaitCq(link.b.qp.recvCq());
        SendRequest reply = link.b.qp.prepareSend(new SendWorkRequest().sge(link.b.mr, 64, 8));
        KiTable.Builder b = KiTable.builder(eb);
        b.addSend(reply);
        b.addWait(w);
        KiTable table = b.writeTo(tableMemory(b));
        // A wait far longer than the join's bound: only the abort ends it in time.
        KiLaunch l = eb.pingPong(table, 1, false, 0, Duration.ofHours(1).toNanos());
        assertTrue(table.abort());
        KiException e = assertThrows(KiException.class, () -> l.join(JOIN));
        assertEquals("ping-pong on host was aborted by the host (the job failed)", e.getMessage());
        assertNotNull(e.status());
        assertEquals(KiTableLayout.STATUS_ABORTED, e.status().code());
        assertFalse(reply.isExecuted(), "the responder never replied");
        // An abort that comes before the launch starts is not cleared by it: the launch ends at its first wait.
        KiException before = assertThrows(KiException.class,
                () -> eb.pingPong(table, 1, false, 0, Duration.ofHours(1).toNanos()).join(JOIN));
        assertEquals(KiTableLayout.STATUS_ABORTED, before.status().code());
        table.clearStatus();
        eb.sendTemplates(table, List.of()).join(JOIN);
    }

    @Test
    void aWaitGivenItsTableEndsWithAbortedOnceTheHostAborts() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment word = arena.allocate(4, 4);
            link.b.qp.postRecv(new RecvWorkRequest().sge(link.b.mr, 0, 8));
            KiTable.Builder b = KiTable.builder(DeviceAddressMap.HOST);
            b.addWait(link.b.qp.prepareWaitCq(link.b.qp.recvCq()));
            KiTable table = b.writeTo(arena.allocate(b.byteSize(), 8));
            IdleStrategy idler = new YieldingIdleStrategy();
            assertEquals(KiDevice.TIMEOUT, KiDevice.waitWord(word.address(), 1,
                    WaitCondition.EQ, 0, idler, table), "not aborted: its timeout ends it");
            table.abort();
            assertEquals(KiDevice.ABORTED, KiDevice.waitWord(word.address(), 1,
                    WaitCondition.EQ, Duration.ofHours(1).toNanos(), idler, table));
            assertEquals(KiDevice.TIMEOUT, KiDevice.waitWord(word.address(), 1,
                    WaitCondition.EQ, 0, idler, null), "no table: not watched");
            word.set(ValueLayout.JAVA_INT, 0, 1);
            assertEquals(KiDevice.OK, KiDevice.waitWord(word.address(), 1,
                    WaitCondition.EQ, Duration.ofHours(1).toNanos(), idler, table),
                    "a word that holds wins over the abort");
        }
    }

    @Test
    void aFailedReceiverEndsTheExchangeWithoutUnpacking() {
        HostKiExecutor eb = executor("b", link.b, true);
        KiTable tb = exchangeTable(link.b, eb);
        for (int j = 0; j < K; j++) {
            link.a.qp.postRecv(new RecvWorkRequest().sge(link.a.mr, RECV + (long) j * CHUNK, CHUNK));
        }
        AtomicIntegerArray unpacks = new AtomicIntegerArray(1);
        KiExchangeWork work = new StubWork() {
            @Override
            public int interiorChunks() {
                return 4;
            }

            @Override
            public int unpackCount() {
                return 3;
            }

            @Override
            public void unpack(int index) {
                unpacks.incrementAndGet(0);
            }
        };
        KiLaunch l = eb.exchange(tb, new KiExchange(2, 3, work), Duration.ofMillis(150).toNanos());
        KiException e = assertThrows(KiException.class, () -> l.join(JOIN));
        assertTrue(e.getMessage().startsWith("exchange on host timed out waiting on wait entry 0 (CQE #0 of recv CQ of QP "),
                e.getMessage());
        assertEquals(0, unpacks.get(0), "no unpack after a failed receive");
        Link.reap(link.a.qp.recvCq(), K);
    }

    @Test
    void anUnusableWaitEntryIsReportedAsInvalid() {
        HostKiExecutor eb = executor("b", link.b, true);
        link.b.qp.postRecv(new RecvWorkRequest().sge(link.b.mr, 0, 8));
        KiTable.Builder b = KiTable.builder(eb);
        b.addSend(link.b.qp.prepareSend(new SendWorkRequest().sge(link.b.mr, 64, 8)));
        b.addWait(link.b.qp.prepareWaitCq(link.b.qp.recvCq()));
        KiTable table = b.writeTo(tableMemory(b));
        long cond = KiTableLayout.HEADER.byteSize() + KiTableLayout.SEND.byteSize()
                + KiTableLayout.offsetOf(KiTableLayout.WAIT, "cond");
        table.segment().set(ValueLayout.JAVA_INT, cond, 9);
        KiException e = assertThrows(KiException.class, () -> eb.pingPong(table, 1, false, 0, TIMEOUT).join(JOIN));
        assertTrue(e.getMessage().startsWith("ping-pong on host could not use wait entry 0"), e.getMessage());
        assertEquals(KiTableLayout.STATUS_INVALID, e.status().code());
    }

    @Test
    void aBlockWhoseWorkThrowsFailsTheLaunchWithThatCause() {
        HostKiExecutor eb = executor("b", link.b, true);
        KiTable tb = exchangeTable(link.b, eb);
        IllegalStateException boom = new IllegalStateException("boom");
        KiExchangeWork work = new StubWork() {
            @Override
            public void pack(int sendIndex) {
                throw boom;
            }
        };
        KiException e = assertThrows(KiException.class,
                () -> eb.exchange(tb, new KiExchange(1, 0, work), Duration.ofMillis(100).toNanos()).join(JOIN));
        assertTrue(e.getMessage().startsWith("exchange on host: block "), e.getMessage());
        assertEquals(boom, e.getCause());
        eb.sendTemplates(tb, List.of()).join(JOIN);
    }

    @Test
    void badArgumentsAreRefusedBeforeAnythingRuns() {
        HostKiExecutor eb = executor("b", link.b, true);
        link.b.qp.postRecv(new RecvWorkRequest().sge(link.b.mr, 0, 8));
        SendRequest s = link.b.qp.prepareSend(new SendWorkRequest().sge(link.b.mr, 64, 8));
        KiTable.Builder b = KiTable.builder(eb);
        b.addSend(s);
        b.addWait(link.b.qp.prepareWaitCq(link.b.qp.recvCq()));
        KiTable table = b.writeTo(tableMemory(b));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> eb.pingPong(table, 2, true, 0, TIMEOUT));
        assertEquals("ping-pong of 2 iterations needs 2 send and 2 wait entries, the table has 1 sends and 1 waits", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> eb.pingPong(table, 1, true, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> eb.pingPong(table, 1, true, -1, TIMEOUT));
        assertThrows(IllegalArgumentException.class, () -> eb.sendTemplates(table,
                List.of(new KiTemplateArgs(0, 8, 0, 0, 0))));
        KiCopyWork unpackOnly = new KiCopyWork(List.of(), List.of(new KiCopy(link.b.mem().asSlice(0, 8),
                link.b.mem().asSlice(8, 8))), null, 0, 0);
        e = assertThrows(IllegalArgumentException.class, () -> eb.exchange(table, new KiExchange(1, 0, unpackOnly), TIMEOUT));
        assertTrue(e.getMessage().contains("no unpack blocks"), e.getMessage());
        KiCopyWork wrongPack = new KiCopyWork(List.of(new KiCopy(link.b.mem().asSlice(0, 8), link.b.mem().asSlice(8, 8)),
                new KiCopy(link.b.mem().asSlice(0, 8), link.b.mem().asSlice(8, 8))), List.of(), null, 0, 0);
        assertThrows(IllegalArgumentException.class, () -> eb.exchange(table, new KiExchange(1, 0, wrongPack), TIMEOUT));
        KiCopyWork none = new KiCopyWork(List.of(), List.of(), null, 0, 0);
        KiException tooMany = assertThrows(KiException.class, () -> eb.exchange(table, new KiExchange(200, 100, none), TIMEOUT));
        assertTrue(tooMany.getMessage().contains("at most " + HostKiExecutor.MAX_BLOCKS), tooMany.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new KiExchange(0, 1, none));
        assertThrows(IllegalArgumentException.class, () -> new KiCopy(link.b.mem().asSlice(0, 8), link.b.mem().asSlice(0, 9)));
        assertThrows(IllegalArgumentException.class, () -> new KiTemplateArgs(0, -1, 0, 0, 0));
        assertFalse(s.isExecuted(), "nothing rang the send");
        assertTrue(table.status().isOk());
        eb.close();
        assertThrows(IllegalStateException.class, () -> eb.pingPong(table, 1, true, 0, TIMEOUT));
    }

    @Test
    void joinWithABoundGivesUpOnAKernelStillRunning() {
        HostKiExecutor eb = executor("b", link.b, true);
        link.b.qp.postRecv(new RecvWorkRequest().sge(link.b.mr, 0, 8));
        KiTable.Builder b = KiTable.builder(eb);
        b.addSend(link.b.qp.prepareSend(new SendWorkRequest().sge(link.b.mr, 64, 8)));
        b.addWait(link.b.qp.prepareWaitCq(link.b.qp.recvCq()));
        KiTable table = b.writeTo(tableMemory(b));
        KiLaunch l = eb.pingPong(table, 1, false, 0, Duration.ofMillis(1500).toNanos());
        KiException e = assertThrows(KiException.class, () -> l.join(Duration.ofMillis(20)));
        assertTrue(e.getMessage().contains("had not ended after 20 ms"), e.getMessage());
        assertFalse(l.isDone());
        KiException timedOut = assertThrows(KiException.class, () -> l.join(JOIN));
        assertNotEquals(e.getMessage(), timedOut.getMessage());
    }
}
