package dev.gdasync.test.swnic;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.SendExecutor;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.test.harness.LocalPeer;
import dev.gdasync.test.harness.Payloads;
import dev.gdasync.test.harness.Peer;
import dev.gdasync.test.harness.RemotePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static dev.gdasync.test.harness.Checks.NO_HANG;
import static dev.gdasync.test.harness.Checks.assertClean;
import static dev.gdasync.test.harness.Checks.expectNoCqe;
import static dev.gdasync.test.harness.Checks.jobId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Doorbells rung without a CPU post, to a peer process that checks every message: by a host stream
 * (descriptors), and by plain stores from a thread that calls nothing of the NIC (as a GPU or a kernel
 * thread would), announced with {@link SendRequest#expectPlainStoreRing()}, exported through a
 * {@link KiTable} and written through the table's raw addresses, or not announced at all. In the
 * plain-store cases only the software NIC's agent can have found the ring.
 */
@Timeout(120)
class DoorbellRingTest {
    private static final int MAX = 256;
    private static final QueuePairConfig CFG = new QueuePairConfig(64, 64, 128);
    private static final Duration SINK_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path base;

    private interface Body {
        void run(LocalPeer me, RemotePeer child, QueuePair qp, MemoryRegion tx) throws Exception;
    }

    private void withPair(String name, int messages, Body body) throws Exception {
        String job = jobId("ring");
        try (RemotePeer child = RemotePeer.start(name, job, base);
             LocalPeer me = LocalPeer.open(name + "-parent", SwNicConfig.defaults().withJobId(job).withShmBase(base))) {
            me.alloc("tx", 64L * MAX);
            me.register("tx", "tx", 0, 64L * MAX, Access.LOCAL_WRITE);
            child.alloc("rx", 64L * MAX);
            child.register("rx", "rx", 0, 64L * MAX, Access.LOCAL_WRITE);
            Peer.connectPair(me, "q", child, "q", CFG);
            child.startSink("sink", "q", "rx", messages, 8, MAX, SINK_TIMEOUT);
            body.run(me, child, me.qp("q"), me.mr("tx"));
            assertClean(child.await("sink", SINK_TIMEOUT), messages, "the child's sink");
            expectNoCqe(me, "q", Peer.Cq.SEND);
        }
    }

    /** Writes message {@code seq} into its slot and prepares its signaled SEND. */
    private static SendRequest prepare(QueuePair qp, MemoryRegion tx, long seq) {
        int size = Payloads.messageSize(seq, 8, MAX);
        long off = (seq % 64) * MAX;
        MemorySegment.copy(Payloads.message(seq, size), 0, tx.segment(), ValueLayout.JAVA_BYTE, off, size);
        return qp.prepareSend(new SendWorkRequest().opcode(Opcode.SEND).wrId(seq).flags(SendFlags.SIGNALED).sge(tx, off, size));
    }

    /** Reaps {@code count} successful send completions, wr ids 0, 1, ... in order. */
    private static void reapSends(QueuePair qp, int count) {
        Completion c = new Completion();
        long deadline = System.nanoTime() + NO_HANG.toNanos();
        for (int i = 0; i < count; ) {
            if (qp.sendCq().poll(c) == 1) {
                assertEquals(CompletionStatus.SUCCESS, c.status(), c.toString());
                assertEquals(CompletionOpcode.SEND, c.opcode(), c.toString());
                assertEquals(i, c.wrId(), c.toString());
                i++;
            } else if (System.nanoTime() - deadline > 0) {
                fail("only " + i + " of " + count + " send completions within " + NO_HANG.toSeconds() + " s on " + qp);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /** Runs {@code body} on a plain thread and rethrows what it threw. */
    private static void onPlainThread(String name, Runnable body) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().name(name).start(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join(NO_HANG.toMillis() * 2);
        assertTrue(!t.isAlive(), name + " did not finish");
        if (failure.get() != null) {
            throw new AssertionError(name + " failed", failure.get());
        }
    }

    @Test
    void aHostStreamRingsPreparedSends() throws Exception {
        int n = 40;
        withPair("ring-stream", n, (me, child, qp, tx) -> {
            try (HostStream stream = HostStream.create("ringer", WaitPolicy.lowLatency(Duration.ofSeconds(30)))) {
                for (long seq = 0; seq < n; seq++) {
                    SendRequest send = prepare(qp, tx, seq);
                    WaitRequest done = qp.prepareWaitCq(qp.sendCq());
                    stream.post(List.of(new Descriptor.Send(send), new Descriptor.Wait(done)));
                }
                Event e = stream.record();
                assertTrue(e.synchronize(NO_HANG), "the stream did not get through its sends and waits");
                assertNull(stream.failure());
                reapSends(qp, n);
            }
        });
    }

    @Test
    void plainStoresRingAnnouncedSends() throws Exception {
        int n = 16;
        withPair("ring-store", n, (me, child, qp, tx) -> {
            SendExecutor plainThread = () -> "a plain-store thread";
            List<SendRequest> sends = new ArrayList<>();
            for (long seq = 0; seq < n; seq++) {
                SendRequest r = prepare(qp, tx, seq);
                r.checkPost(0, plainThread);
                r.markPosted(plainThread);
                r.expectPlainStoreRing();
                sends.add(r);
            }
            onPlainThread("ringer", () -> {
                // One request per ring for the first half...
                for (int i = 0; i < n / 2; i++) {
                    ring(sends.get(i));
                    awaitExecuted(sends.get(i));
                }
                // ...then one store of the cumulative producer index rings the whole second half.
                ring(sends.get(n - 1));
            });
            reapSends(qp, n);
        });
    }

    @Test
    void plainStoresRingSendsNobodyAnnounced() throws Exception {
        int n = 8;
        withPair("ring-unannounced", n, (me, child, qp, tx) -> {
            List<SendRequest> sends = new ArrayList<>();
            for (long seq = 0; seq < n; seq++) {
                sends.add(prepare(qp, tx, seq));
            }
            // No expectPlainStoreRing, no post: the agent's background polling must find the ring.
            onPlainThread("ringer", () -> {
                for (SendRequest r : sends) {
                    ring(r);
                }
            });
            reapSends(qp, n);
        });
    }

    @Test
    void aThreadRingsAndWaitsThroughAKiTable() throws Exception {
        int n = 12;
        withPair("ring-ki", n, (me, child, qp, tx) -> {
            KiTable.Builder builder = KiTable.builder(DeviceAddressMap.HOST);
            for (long seq = 0; seq < n; seq++) {
                builder.addSend(prepare(qp, tx, seq));
                builder.addWait(qp.prepareWaitCq(qp.sendCq()));
            }
            try (Arena arena = Arena.ofShared()) {
                KiTable table = builder.writeTo(arena.allocate(builder.byteSize(), 8));
                // What a kernel thread does with the table: raw addresses only, no Java objects of the NIC.
                onPlainThread("ki-thread", () -> {
                    for (int i = 0; i < table.sendCount(); i++) {
                        KiTable.SendEntry s = table.send(i);
                        word32(s.dbrecAddress(), "dbrec").set32(s.dbrecValue(), true);
                        word64(s.doorbellAddress(), "doorbell").set64(s.doorbellValue(), false);
                        KiTable.WaitEntry w = table.waitEntry(i);
                        MemoryWord cqe = word32(w.wordAddress(), "send CQE validity");
                        long deadline = System.nanoTime() + NO_HANG.toNanos();
                        while (!w.condition().test(cqe.getAcquire32(), w.value())) {
                            if (System.nanoTime() - deadline > 0) {
                                throw new AssertionError("send " + i + " of the KI table never completed");
                            }
                            Thread.onSpinWait();
                        }
                        word32(w.flagAddress(), "release").set32(w.flagValue(), true);
                    }
                });
                reapSends(qp, n);
            }
        });
    }

    private static void ring(SendRequest r) {
        r.doorbellRecord().set32(r.doorbellRecordValue(), true);
        r.doorbell().set64(r.doorbellValue(), false);
    }

    private static void awaitExecuted(SendRequest r) {
        long deadline = System.nanoTime() + NO_HANG.toNanos();
        while (!r.isExecuted()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("nobody executed " + r + " rung by a plain store");
            }
            Thread.onSpinWait();
        }
    }

    private static MemoryWord word32(long address, String name) {
        return MemoryWord.word32(MemorySegment.ofAddress(address).reinterpret(4), 0, name);
    }

    private static MemoryWord word64(long address, String name) {
        return MemoryWord.word64(MemorySegment.ofAddress(address).reinterpret(8), 0, name);
    }
}
