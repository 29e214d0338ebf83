package dev.gdasync.gdsync.ki;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The KI descriptor table: its fixed layout, the round trip, and what exporting does. */
class KiTableTest {
    @TempDir
    Path base;
    private SoftwareNic a;
    private SoftwareNic b;
    private HostRegion ra;
    private HostRegion rb;
    private MemoryRegion ma;
    private MemoryRegion mb;
    private QueuePair qa;
    private QueuePair qb;

    @BeforeEach
    void open() {
        SwNicConfig cfg = SwNicConfig.defaults().withShmBase(base).withJobId("ki");
        a = SoftwareNic.open(cfg);
        b = SoftwareNic.open(cfg);
        ra = a.allocateHost(8192);
        rb = b.allocateHost(8192);
        ma = a.register(ra, Access.ALL);
        mb = b.register(rb, Access.ALL);
        qa = a.createQueuePair(QueuePairConfig.DEFAULT);
        qb = b.createQueuePair(QueuePairConfig.DEFAULT);
        qa.connect(qb.endpoint());
        qb.connect(qa.endpoint());
    }

    @AfterEach
    void close() {
        a.close();
        b.close();
    }

    @Test
    void theLayoutIsTheDocumentedOne() {
        assertEquals(64, KiTableLayout.HEADER.byteSize());
        assertEquals(32, KiTableLayout.SEND.byteSize());
        assertEquals(32, KiTableLayout.WAIT.byteSize());
        String[] header = {"magic", "version", "header_bytes", "send_count", "wait_count", "send_offset", "wait_offset",
            "send_entry_bytes", "wait_entry_bytes", "total_bytes", "template_count", "template_offset",
            "template_entry_bytes", "status_code", "status_kind", "status_index"};
        long[] headerOffsets = {0, 4, 6, 8, 12, 16, 20, 24, 28, 32, 40, 44, 48, 52, 56, 60};
        for (int i = 0; i < header.length; i++) {
            assertEquals(headerOffsets[i], KiTableLayout.offsetOf(KiTableLayout.HEADER, header[i]), header[i]);
        }
        String[] send = {"dbrec_addr", "dbrec_value", "flags", "db_addr", "db_value"};
        long[] sendOffsets = {0, 8, 12, 16, 24};
        for (int i = 0; i < send.length; i++) {
            assertEquals(sendOffsets[i], KiTableLayout.offsetOf(KiTableLayout.SEND, send[i]), send[i]);
        }
        String[] wait = {"word_addr", "value", "cond", "flag_addr", "flag_value"};
        long[] waitOffsets = {0, 8, 12, 16, 24};
        for (int i = 0; i < wait.length; i++) {
            assertEquals(waitOffsets[i], KiTableLayout.offsetOf(KiTableLayout.WAIT, wait[i]), wait[i]);
        }
        String[] template = {"wqe_addr", "dbrec_addr", "dbrec_value", "flags", "db_addr", "db_value", "off_sge_addr",
            "off_sge_lkey", "off_sge_length", "off_total_length", "off_remote_addr", "off_rkey"};
        long[] templateOffsets = {0, 8, 16, 20, 24, 32, 40, 42, 44, 46, 48, 50};
        for (int i = 0; i < template.length; i++) {
            assertEquals(templateOffsets[i], KiTableLayout.offsetOf(KiTableLayout.TEMPLATE, template[i]), template[i]);
        }
        assertEquals(64, KiTableLayout.TEMPLATE.byteSize());
        assertEquals(64 + 3 * 32 + 2 * 32, KiTableLayout.bytes(3, 2));
        assertEquals(64 + 3 * 32 + 2 * 32 + 64, KiTableLayout.bytes(3, 2, 1));
    }

    @Test
    void aTemplatePatchedByAKernelSendsWhatTheKernelChose() throws Exception {
        qb.postRecv(new RecvWorkRequest().wrId(4).sge(mb, 0, 64));
        ra.segment().set(JAVA_LONG, 0, 1);          // the placeholder the CPU prepared with
        ra.segment().set(JAVA_LONG, 256, 42);       // what the kernel will send instead
        ra.segment().set(JAVA_LONG, 264, 43);
        SendRequest s = qa.prepareSend(new SendWorkRequest().sge(ma, 0, 8));
        KiTable.Builder builder = KiTable.builder(DeviceAddressMap.HOST);
        assertEquals(0, builder.addTemplate(s));
        HostRegion mem = a.allocateHost(builder.byteSize());
        KiTable table = builder.writeTo(mem.segment());
        KiTable.TemplateEntry t = KiTable.read(table.segment()).template(0);
        Thread kernel = new Thread(() -> {
            MemorySegment wqe = MemorySegment.ofAddress(t.wqeAddress()).reinterpret(256);
            wqe.set(JAVA_LONG, t.offSgeAddress(), ma.address() + 256);
            wqe.set(JAVA_LONG, t.offSgeLkey(), ma.lkey());
            wqe.set(ValueLayout.JAVA_INT, t.offSgeLength(), 16);
            wqe.set(ValueLayout.JAVA_INT, t.offTotalLength(), 16);
            java.lang.invoke.VarHandle.fullFence();
            MemorySegment.ofAddress(t.dbrecAddress()).reinterpret(4).set(ValueLayout.JAVA_INT, 0, t.dbrecValue());
            MemorySegment.ofAddress(t.doorbellAddress()).reinterpret(8).set(JAVA_LONG, 0, t.doorbellValue());
        });
        kernel.start();
        kernel.join();
        Completion c = new Completion();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (qb.recvCq().poll(c) == 0) {
            if (System.nanoTime() > deadline) {
                fail("the patched template never arrived");
            }
        }
        assertEquals(16, c.byteLength());
        assertEquals(42, rb.segment().get(JAVA_LONG, 0));
        assertEquals(43, rb.segment().get(JAVA_LONG, 8));
    }

    @Test
    void onlySingleBufferNonInlineSendsAreTemplates() {
        SendRequest two = qa.prepareSend(new SendWorkRequest().sge(ma, 0, 8).sge(ma, 8, 8));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> KiTable.builder(DeviceAddressMap.HOST).addTemplate(two));
        assertTrue(e.getMessage().contains("exactly one local buffer"), e.getMessage());
        assertEquals(SendRequest.State.PREPARED, two.state());
    }

    @Test
    void theStatusNamesTheFailedEntry() {
        qb.postRecv(new RecvWorkRequest().sge(mb, 0, 8));
        WaitRequest w = qb.prepareWaitCq(qb.recvCq());
        KiTable.Builder builder = KiTable.builder(DeviceAddressMap.HOST);
        builder.addWait(w);
        try (Arena arena = Arena.ofConfined()) {
            KiTable t = builder.writeTo(arena.allocate(builder.byteSize(), 8));
            assertTrue(t.status().isOk());
            t.segment().set(ValueLayout.JAVA_INT, 56, KiTableLayout.KIND_WAIT);
            t.segment().set(ValueLayout.JAVA_INT, 60, 0);
            t.segment().set(ValueLayout.JAVA_INT, 52, KiTableLayout.STATUS_TIMEOUT);
            KiTable.Status st = t.status();
            assertEquals(KiTableLayout.STATUS_TIMEOUT, st.code());
            assertEquals("wait entry 0 (CQE #0 of recv CQ of QP " + qb.number() + ")", t.describe(st.kind(), st.index()));
            assertEquals("wait entry 0", KiTable.read(t.segment()).describe(st.kind(), st.index()));
            t.clearStatus();
            assertTrue(t.status().isOk());
        }
    }

    @Test
    void theHostAbortsALaunchThroughTheStatusWordUnlessAFailureIsRecordedFirst() {
        qb.postRecv(new RecvWorkRequest().sge(mb, 0, 8));
        KiTable.Builder builder = KiTable.builder(DeviceAddressMap.HOST);
        builder.addWait(qb.prepareWaitCq(qb.recvCq()));
        try (Arena arena = Arena.ofConfined()) {
            KiTable t = builder.writeTo(arena.allocate(builder.byteSize(), 8));
            assertTrue(t.abort(), "the first failure is recorded");
            assertFalse(t.abort(), "a second abort keeps the first");
            assertFalse(t.report(KiTableLayout.STATUS_TIMEOUT, KiTableLayout.KIND_WAIT, 0), "a later timeout too");
            assertEquals(KiTableLayout.STATUS_ABORTED, t.statusCode());
            assertEquals(KiTableLayout.STATUS_ABORTED, t.segment().get(ValueLayout.JAVA_INT, 52), "status_code at 52");
            assertEquals(new KiTable.Status(KiTableLayout.STATUS_ABORTED, KiTableLayout.KIND_NONE, 0), t.status());
            assertEquals("no entry (the host, or the kernel's own state)", t.describe(KiTableLayout.KIND_NONE, 0));
            t.clearStatusForLaunch();
            assertEquals(KiTableLayout.STATUS_ABORTED, t.statusCode(), "an abort before the launch stands for it");
            t.clearStatus();
            assertEquals(KiTableLayout.STATUS_OK, t.statusCode());
            assertTrue(t.report(KiTableLayout.STATUS_TIMEOUT, KiTableLayout.KIND_WAIT, 0));
            t.clearStatusForLaunch();
            assertEquals(new KiTable.Status(KiTableLayout.STATUS_OK, KiTableLayout.KIND_NONE, 0), t.status(),
                    "an earlier launch's failure is cleared for the next");
            assertTrue(t.report(KiTableLayout.STATUS_TIMEOUT, KiTableLayout.KIND_WAIT, 0));
            assertFalse(t.abort(), "the kernel's own failure is kept: it ends the launch as well");
            assertEquals(KiTableLayout.STATUS_TIMEOUT, t.statusCode());
        }
    }

    @Test
    void aWrittenTableReadsBackAndIsLittleEndian() {
        qb.postRecv(new RecvWorkRequest().sge(mb, 0, 8));
        SendRequest s = qa.prepareSend(new SendWorkRequest().sge(ma, 0, 8));
        WaitRequest w = qb.prepareWaitCq(qb.recvCq());
        MemoryWord ready = MemoryWord.word32(ra.segment(), 4096, "ready flag");
        KiTable.Builder builder = KiTable.builder(DeviceAddressMap.HOST);
        assertEquals(0, builder.addSend(s));
        assertEquals(0, builder.addWait(w));
        assertEquals(1, builder.addWordWait(ready, 7, WaitCondition.GEQ));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mem = arena.allocate(builder.byteSize(), 8);
            KiTable t = builder.writeTo(mem);
            assertEquals(0x54494B47, mem.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 0));
            assertEquals('G', mem.get(ValueLayout.JAVA_BYTE, 0));
            KiTable r = KiTable.read(mem);
            assertEquals(1, r.sendCount());
            assertEquals(2, r.waitCount());
            KiTable.SendEntry se = r.send(0);
            assertEquals(s.doorbellRecord().address(), se.dbrecAddress());
            assertEquals(s.doorbellRecordValue(), se.dbrecValue());
            assertEquals(s.doorbell().address(), se.doorbellAddress());
            assertEquals(s.doorbellValue(), se.doorbellValue());
            assertEquals(KiTableLayout.SEND_SIGNALED | KiTableLayout.SEND_FENCE_SYSTEM, se.flags());
            KiTable.WaitEntry we = r.waitEntry(0);
            assertEquals(w.word().address(), we.wordAddress());
            assertEquals(w.value(), we.value());
            assertEquals(WaitCondition.GEQ, we.condition());
            assertEquals(w.releaseWord().address(), we.flagAddress());
            assertEquals(w.releaseValue(), we.flagValue());
            KiTable.WaitEntry ww = r.waitEntry(1);
            assertEquals(ready.address(), ww.wordAddress());
            assertEquals(7, ww.value());
            assertEquals(0, ww.flagAddress());
            assertEquals(t.segment().byteSize(), KiTableLayout.bytes(1, 2));
            assertEquals(0, r.templateCount());
        }
        assertEquals(SendRequest.State.POSTED, s.state());
        assertEquals(WaitRequest.State.POSTED, w.state());
    }

    @Test
    void readRejectsForeignOrDamagedTables() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mem = arena.allocate(256, 8);
            assertThrows(IllegalArgumentException.class, () -> KiTable.read(mem));
            KiTable.builder(DeviceAddressMap.HOST).writeTo(mem);
            KiTable.read(mem);
            mem.set(ValueLayout.JAVA_SHORT, 4, (short) 9);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KiTable.read(mem));
            assertTrue(e.getMessage().contains("version"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> KiTable.read(mem.asSlice(0, 10)));
        }
    }

    @Test
    void exportFollowsPrepareOrderAndPostsNothingOnFailure() {
        SendRequest first = qa.prepareSend(new SendWorkRequest().sge(ma, 0, 8));
        SendRequest second = qa.prepareSend(new SendWorkRequest().sge(ma, 0, 8));
        KiTable.Builder out = KiTable.builder(DeviceAddressMap.HOST);
        assertThrows(IllegalStateException.class, () -> out.addSend(second));
        KiTable.Builder builder = KiTable.builder(DeviceAddressMap.HOST);
        builder.addSend(first);
        builder.addSend(second);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment small = arena.allocate(builder.byteSize() - 8, 8);
            assertThrows(IllegalArgumentException.class, () -> builder.writeTo(small));
            assertEquals(SendRequest.State.PREPARED, first.state());
            DeviceAddressMap refusing = word -> {
                throw new IllegalArgumentException(word + " is not device-visible");
            };
            KiTable.Builder blind = KiTable.builder(refusing);
            blind.addSend(first);
            assertThrows(IllegalArgumentException.class, () -> blind.writeTo(arena.allocate(256, 8)));
            assertEquals(SendRequest.State.PREPARED, first.state());
            builder.writeTo(arena.allocate(builder.byteSize(), 8));
            assertEquals(SendRequest.State.POSTED, second.state());
            assertThrows(IllegalStateException.class, () -> builder.addSend(first));
        }
    }

    @Test
    void aKernelThreadRingsThroughTheTableAlone() throws Exception {
        qb.postRecv(new RecvWorkRequest().wrId(3).sge(mb, 0, 8));
        ra.segment().set(JAVA_LONG, 0, 9090);
        SendRequest s = qa.prepareSend(new SendWorkRequest().sge(ma, 0, 8));
        WaitRequest w = qb.prepareWaitCq(qb.recvCq());
        KiTable.Builder builder = KiTable.builder(DeviceAddressMap.HOST);
        builder.addSend(s);
        builder.addWait(w);
        HostRegion tableMem = a.allocateHost(builder.byteSize());
        KiTable table = builder.writeTo(tableMem.segment());
        // A "kernel" that knows nothing but the table: raw addresses, plain stores, a spin on the CQE.
        Thread kernel = new Thread(() -> {
            KiTable t = KiTable.read(table.segment());
            KiTable.SendEntry se = t.send(0);
            MemorySegment.ofAddress(se.dbrecAddress()).reinterpret(4).set(ValueLayout.JAVA_INT, 0, se.dbrecValue());
            MemorySegment.ofAddress(se.doorbellAddress()).reinterpret(8).set(JAVA_LONG, 0, se.doorbellValue());
            KiTable.WaitEntry we = t.waitEntry(0);
            MemorySegment word = MemorySegment.ofAddress(we.wordAddress()).reinterpret(4);
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!we.condition().test(word.get(ValueLayout.JAVA_INT, 0), we.value())) {
                if (System.nanoTime() > deadline) {
                    return;
                }
                Thread.onSpinWait();
            }
            MemorySegment.ofAddress(we.flagAddress()).reinterpret(4).set(ValueLayout.JAVA_INT, 0, we.flagValue());
        });
        kernel.start();
        kernel.join();
        Completion c = new Completion();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (qb.recvCq().poll(c) == 0) {
            if (System.nanoTime() > deadline) {
                fail("the receive never completed: the kernel's wait or release did not happen");
            }
        }
        assertEquals(3, c.wrId());
        assertEquals(9090, rb.segment().get(JAVA_LONG, 0));
    }
}
