package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;
import dev.gdasync.gdsync.mlx5.Mlx5CqQueues;
import dev.gdasync.gdsync.mlx5.Mlx5Cqe;
import dev.gdasync.gdsync.mlx5.Mlx5Keys;
import dev.gdasync.gdsync.mlx5.Mlx5Layouts;
import dev.gdasync.gdsync.mlx5.Mlx5Opcodes;
import dev.gdasync.gdsync.mlx5.Mlx5QpQueues;
import dev.gdasync.gdsync.mlx5.Mlx5QpShape;
import dev.gdasync.gdsync.mlx5.Mlx5WqeWriter;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Endpoint;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;

import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE32;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE64;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A ConnectX port talking to itself: two RC queue pairs on one port, connected to each other, move bytes with an RDMA
 * WRITE, an inline RDMA WRITE and a SEND written by {@link Mlx5WqeWriter} and rung as the provider rings them (send
 * counter to the doorbell record, then the control segment's first 8 bytes to the BlueFlame register); the CQEs are
 * read with {@link Mlx5Cqe}. Also: flush errors after {@code toError}, misuse, and close.
 *
 * <p>Needs an mlx5 device with an active port: {@code -Dgdasync.mlx5.device=mlx5_0} (default: the first),
 * {@code -Dgdasync.mlx5.port=1}, {@code -Dgdasync.mlx5.gidIndex=0} (on RoCE, an index with a GID). Without an RDMA
 * device (or without rdma-core) every test here is skipped and says why.
 */
class HardwareLoopbackTest {
    private static final long CQE_WAIT_NANOS = 5_000_000_000L;

    private static HardwareMlx5Device device;
    private static String skipped;

    @BeforeAll
    static void openDevice() {
        String name = System.getProperty("gdasync.mlx5.device");
        int port = Integer.getInteger("gdasync.mlx5.port", 1);
        int gidIndex = Integer.getInteger("gdasync.mlx5.gidIndex", 0);
        try {
            device = HardwareMlx5Device.open(name, port, gidIndex);
        } catch (VerbsException e) {
            // Only a machine without rdma-core or without an mlx5 device skips: a device that fails to open is a failure.
            boolean noDevice = VerbsLibrary.problem().isPresent() || e.getMessage().startsWith("no RDMA device")
                    || e.getMessage().startsWith("no mlx5 device");
            if (!noDevice) {
                throw e;
            }
            skipped = e.getMessage();
        }
    }

    @AfterAll
    static void closeDevice() {
        if (device != null) {
            device.close();
        }
    }

    private static void requireDevice(TestInfo test) {
        if (skipped != null) {
            System.out.println("HardwareLoopbackTest." + test.getTestMethod().orElseThrow().getName() + " skipped: " + skipped);
            Assumptions.assumeTrue(false, skipped);
        }
    }

    @Test
    void rdmaWriteAndSendBetweenTwoQueuePairsOnOnePort(TestInfo test) {
        requireDevice(test);
        Mlx5CqQueues cqA = device.createCq(16);
        Mlx5CqQueues cqB = device.createCq(16);
        assertEquals(Mlx5Cqe.SIZE, cqA.cqeSize());
        assertTrue(cqA.cqeCount() >= 16, "CQ of " + cqA.cqeCount());
        Mlx5QpQueues a = device.createQp(cqA, cqA, new Mlx5QpShape(16, 16, 1, 64));
        Mlx5QpQueues b = device.createQp(cqB, cqB, new Mlx5QpShape(16, 16, 1, 64));
        assertTrue(a.maxInline() >= 64, "asked for 64 inline bytes, got " + a.maxInline());
        assertNull(device.doorbell(a), "hardware needs no host doorbell call");
        device.connect(a, device.endpoint(b));
        device.connect(b, device.endpoint(a));

        Region src = device.allocateHost(4096);
        Region dst = device.allocateHost(4096);
        Mlx5Keys srcKeys = device.register(src, 0, 4096, Access.ALL);
        Mlx5Keys dstKeys = device.register(dst, 0, 4096, Access.ALL);
        for (int i = 0; i < 4096; i++) {
            src.segment().set(JAVA_BYTE, i, (byte) (i * 7 + 3));
        }

        // RDMA WRITE: src[0, 256) to dst[0, 256).
        int pi = post(a, 0, Mlx5Opcodes.RDMA_WRITE, w -> w.raddr(dst.address(), dstKeys.rkey())
                .data(256, srcKeys.lkey(), src.address()));
        long off = poll(cqA, 0, "the RDMA WRITE's completion");
        assertEquals(Mlx5Opcodes.CQE_REQ, Mlx5Cqe.opcode(cqA.buffer(), off));
        assertEquals(0, Mlx5Cqe.wqeCounter(cqA.buffer(), off));
        assertEquals(a.qpn(), Mlx5Cqe.qpn(cqA.buffer(), off));
        assertBytes(src, 0, dst, 0, 256, "RDMA WRITE");

        // Inline RDMA WRITE: 48 bytes of src[2048) carried in the WQE to dst[2048).
        int inlineAt = pi;
        pi = post(a, pi, Mlx5Opcodes.RDMA_WRITE, w -> w.raddr(dst.address() + 2048, dstKeys.rkey())
                .inline(src.segment(), 2048, 48));
        off = poll(cqA, 1, "the inline RDMA WRITE's completion");
        assertEquals(Mlx5Opcodes.CQE_REQ, Mlx5Cqe.opcode(cqA.buffer(), off));
        assertEquals(inlineAt & 0xffff, Mlx5Cqe.wqeCounter(cqA.buffer(), off));
        assertBytes(src, 2048, dst, 2048, 48, "inline RDMA WRITE");

        // SEND: b posts a receive of dst[1024, 1536), a sends src[512, 640).
        postReceive(b, 0, dst.address() + 1024, 512, dstKeys.lkey());
        int sendAt = pi;
        post(a, pi, Mlx5Opcodes.SEND, w -> w.data(128, srcKeys.lkey(), src.address() + 512));
        off = poll(cqA, 2, "the SEND's requester completion");
        assertEquals(Mlx5Opcodes.CQE_REQ, Mlx5Cqe.opcode(cqA.buffer(), off));
        assertEquals(sendAt & 0xffff, Mlx5Cqe.wqeCounter(cqA.buffer(), off));
        long r = poll(cqB, 0, "the SEND's responder completion");
        assertEquals(Mlx5Opcodes.CQE_RESP_SEND, Mlx5Cqe.opcode(cqB.buffer(), r));
        assertEquals(128, Mlx5Cqe.byteCount(cqB.buffer(), r));
        assertEquals(b.qpn(), Mlx5Cqe.qpn(cqB.buffer(), r));
        assertBytes(src, 512, dst, 1024, 128, "SEND");

        device.destroyQp(a);
        device.destroyQp(b);
        device.destroyCq(cqA);
        device.destroyCq(cqB);
        device.deregister(srcKeys);
        device.deregister(dstKeys);
        src.close();
        dst.close();
    }

    @Test
    void toErrorFlushesPostedReceives(TestInfo test) {
        requireDevice(test);
        Mlx5CqQueues cqA = device.createCq(4);
        Mlx5CqQueues cqB = device.createCq(4);
        Mlx5QpQueues a = device.createQp(cqA, cqA, new Mlx5QpShape(4, 4, 1, 0));
        Mlx5QpQueues b = device.createQp(cqB, cqB, new Mlx5QpShape(4, 4, 1, 0));
        device.connect(a, device.endpoint(b));
        device.connect(b, device.endpoint(a));
        Region buf = device.allocateHost(4096);
        Mlx5Keys keys = device.register(buf, 0, 4096, Access.LOCAL_WRITE);
        postReceive(b, 0, buf.address(), 4096, keys.lkey());
        device.toError(b);
        long off = waitForCqe(cqB, 0, "the flushed receive's completion");
        assertEquals(Mlx5Opcodes.CQE_RESP_ERR, Mlx5Cqe.opcode(cqB.buffer(), off));
        assertEquals(Mlx5Opcodes.SYNDROME_WR_FLUSH_ERR, Mlx5Cqe.syndrome(cqB.buffer(), off));
        device.toError(a);
        device.destroyQp(a);
        device.destroyQp(b);
        device.destroyCq(cqA);
        device.destroyCq(cqB);
        buf.close();
        assertThrows(IllegalStateException.class, () -> device.deregister(keys), "closing the region deregistered it");
    }

    @Test
    void misuseIsRefusedWithWhatWentWrong(TestInfo test) {
        requireDevice(test);
        Mlx5CqQueues cq = device.createCq(4);
        Mlx5QpQueues qp = device.createQp(cq, cq, new Mlx5QpShape(4, 4, 1, 0));
        Mlx5QpQueues peer = device.createQp(cq, cq, new Mlx5QpShape(4, 4, 1, 0));

        assertEquals("destroyQp: the QP is null",
                assertThrows(NullPointerException.class, () -> device.destroyQp(null)).getMessage());
        try (Arena arena = Arena.ofConfined()) {
            Mlx5CqQueues forged = new Mlx5CqQueues(5, arena.allocate(256), 4, 64, arena.allocate(8), 0xdead000L);
            IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class, () -> device.destroyCq(forged));
            assertTrue(foreign.getMessage().contains("was not made by " + device.name()), foreign.getMessage());
            assertThrows(IllegalArgumentException.class, () -> device.createQp(forged, cq, new Mlx5QpShape(1, 1, 1, 0)));
        }
        IllegalStateException busy = assertThrows(IllegalStateException.class, () -> device.destroyCq(cq));
        assertTrue(busy.getMessage().endsWith("destroy its queue pairs first"), busy.getMessage());

        IllegalArgumentException notOurs = assertThrows(IllegalArgumentException.class,
                () -> device.connect(qp, Endpoint.of(new byte[]{1, 2, 3})));
        assertTrue(notOurs.getMessage().startsWith("not a hardware mlx5 endpoint"), notOurs.getMessage());
        device.connect(qp, device.endpoint(peer));
        IllegalStateException again = assertThrows(IllegalStateException.class, () -> device.connect(qp, device.endpoint(peer)));
        assertTrue(again.getMessage().endsWith("is in RTS, not RESET: a queue pair connects once"), again.getMessage());

        assertThrows(IllegalArgumentException.class, () -> device.createCq(0));
        UnsupportedOperationException gpu = assertThrows(UnsupportedOperationException.class,
                () -> device.allocateDevice(0, 4096));
        assertTrue(gpu.getMessage().contains("dma-buf"), gpu.getMessage());
        assertThrows(UnsupportedOperationException.class, () -> device.register(new GpuRegion(), 0, 64, Access.LOCAL_WRITE));

        Region region = device.allocateHost(100);
        assertThrows(IllegalArgumentException.class, () -> device.register(region, 64, 64, Access.LOCAL_WRITE));
        assertThrows(IllegalArgumentException.class, () -> device.register(region, 0, 64, Access.REMOTE_WRITE));
        Mlx5Keys keys = device.register(region, 0, 100, Access.LOCAL_WRITE);
        device.deregister(keys);
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> device.deregister(keys));
        assertTrue(twice.getMessage().endsWith("is already destroyed"), twice.getMessage());
        region.close();
        assertThrows(IllegalStateException.class, () -> device.register(region, 0, 64, Access.LOCAL_WRITE));

        device.destroyQp(qp);
        IllegalStateException destroyed = assertThrows(IllegalStateException.class, () -> device.destroyQp(qp));
        assertTrue(destroyed.getMessage().endsWith("is already destroyed"), destroyed.getMessage());
        assertThrows(IllegalStateException.class, () -> device.endpoint(qp));
        device.destroyQp(peer);
        device.destroyCq(cq);
        assertThrows(IllegalStateException.class, () -> device.destroyCq(cq));
    }

    @Test
    void closeReleasesEverythingOnceAndRefusesLaterCalls(TestInfo test) {
        requireDevice(test);
        HardwareMlx5Device second = HardwareMlx5Device.open(device.name(), device.port(), device.gidIndex());
        Mlx5CqQueues cq = second.createCq(4);
        second.createQp(cq, cq, new Mlx5QpShape(4, 4, 1, 0));
        Region region = second.allocateHost(4096);
        second.register(region, 0, 4096, Access.ALL);
        second.close();
        assertTrue(second.isClosed());
        assertFalse(region.isOpen(), "close frees the device's memory");
        second.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> second.createCq(4));
        assertEquals("createCq: " + second.name() + " is closed", closed.getMessage());
    }

    // ---- the provider's steps, written out ------------------------------------------------------------------

    /** Writes one signaled WQE at a producer index and rings it; returns the next producer index. */
    private static int post(Mlx5QpQueues qp, int pi, int opcode, Consumer<Mlx5WqeWriter> segments) {
        Mlx5WqeWriter w = new Mlx5WqeWriter(qp.sq(), qp.sqWqeCount());
        w.begin(pi);
        segments.accept(w);
        int next = pi + w.finish(opcode, pi, qp.qpn(), Mlx5Opcodes.CTRL_CQ_UPDATE, 0);
        VarHandle.releaseFence(); // the WQE before the doorbell record
        qp.dbrec().set(BE32, Mlx5QpQueues.SEND_DBR * 4L, next & 0xffff);
        VarHandle.fullFence(); // the doorbell record before the BlueFlame store
        qp.blueFlame().set(JAVA_LONG, 0, qp.sq().get(JAVA_LONG, w.offsetOf(pi)));
        VarHandle.fullFence();
        return next;
    }

    /** Writes receive WQE {@code index} (one buffer, the rest of the scatter list ended) and moves the receive counter. */
    private static void postReceive(Mlx5QpQueues qp, int index, long address, int length, int lkey) {
        MemorySegment rq = qp.rq();
        long off = (long) (index & (qp.rqWqeCount() - 1)) * qp.rqStride();
        rq.set(BE32, off, length);
        rq.set(BE32, off + 4, lkey);
        rq.set(BE64, off + 8, address);
        for (long o = off + Mlx5Layouts.DS_BYTES; o < off + qp.rqStride(); o += Mlx5Layouts.DS_BYTES) {
            rq.set(BE32, o, 0);
            rq.set(BE32, o + 4, Mlx5Layouts.INVALID_LKEY);
            rq.set(BE64, o + 8, 0);
        }
        VarHandle.releaseFence();
        qp.dbrec().set(BE32, Mlx5QpQueues.RECV_DBR * 4L, (index + 1) & 0xffff);
    }

    /** Waits for CQE {@code n}, fails on an error CQE, and gives it back to the NIC (consumer index). */
    private static long poll(Mlx5CqQueues cq, long n, String what) {
        long off = waitForCqe(cq, n, what);
        int opcode = Mlx5Cqe.opcode(cq.buffer(), off);
        if (opcode == Mlx5Opcodes.CQE_REQ_ERR || opcode == Mlx5Opcodes.CQE_RESP_ERR) {
            fail(what + ": error CQE, opcode " + opcode + ", syndrome 0x" + Integer.toHexString(Mlx5Cqe.syndrome(cq.buffer(), off))
                    + ", vendor syndrome 0x" + Integer.toHexString(Mlx5Cqe.vendorSyndrome(cq.buffer(), off)));
        }
        return off;
    }

    private static long waitForCqe(Mlx5CqQueues cq, long n, String what) {
        long off = (n & (cq.cqeCount() - 1)) * (long) cq.cqeSize();
        long deadline = System.nanoTime() + CQE_WAIT_NANOS;
        while (!Mlx5Cqe.isWritten(cq.buffer(), off, n, cq.cqeCount())) {
            if (System.nanoTime() > deadline) {
                fail(what + ": no CQE " + n + " on CQ 0x" + Integer.toHexString(cq.cqn()) + " within 5 s");
            }
            VarHandle.acquireFence(); // a fresh load of the CQE each turn
            Thread.onSpinWait();
        }
        VarHandle.acquireFence(); // the CQE's fields after its owner byte
        cq.dbrec().set(BE32, Mlx5Layouts.CQ_SET_CI * 4L, (int) ((n + 1) & 0xffffff));
        return off;
    }

    private static void assertBytes(Region src, long srcOff, Region dst, long dstOff, int length, String what) {
        long mismatch = MemorySegment.mismatch(src.segment(), srcOff, srcOff + length, dst.segment(), dstOff, dstOff + length);
        assertEquals(-1, mismatch, what + ": the bytes differ at " + mismatch);
    }

    /** A GPU region as the CUDA layer would hand one out: an address, no host segment. */
    private static final class GpuRegion implements Region {
        @Override
        public RegionKind kind() {
            return RegionKind.DEVICE;
        }

        @Override
        public long id() {
            return 1;
        }

        @Override
        public long length() {
            return 4096;
        }

        @Override
        public MemorySegment segment() {
            throw new UnsupportedOperationException("GPU memory");
        }

        @Override
        public long address() {
            return 0x7f0000000000L;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }
}
