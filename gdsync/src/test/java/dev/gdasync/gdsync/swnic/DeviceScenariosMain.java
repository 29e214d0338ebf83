package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.DeviceRegion;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.Descriptors;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static dev.gdasync.gdsync.swnic.DeviceTestSupport.await;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.awaitFailure;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.awaitSuccess;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.check;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.checkBytes;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.pattern;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.read;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.scenario;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.write;

/**
 * A child JVM of {@link DeviceMemoryTest}: device memory between two software NICs of one process (no CUDA
 * IPC), one line per scenario. Arguments: {@code <shm base> all|copy-fails}.
 */
public final class DeviceScenariosMain {
    private static final int REGION = 64 * 1024;
    private static final byte FILL = (byte) 0xEE;

    private DeviceScenariosMain() {
    }

    /** Two NICs with a host and a device region each, all registered, and connected queue pairs. */
    private static final class Pair implements AutoCloseable {
        final SoftwareNic a;
        final SoftwareNic b;
        final HostRegion ha;
        final HostRegion hb;
        final DeviceRegion da;
        final DeviceRegion db;
        final MemoryRegion hma;
        final MemoryRegion hmb;
        final MemoryRegion dma;
        final MemoryRegion dmb;
        final QueuePair qa;
        final QueuePair qb;

        Pair(Path base, CudaContext context) {
            SwNicConfig config = SwNicConfig.defaults().withShmBase(base).withJobId("device");
            a = SoftwareNic.open(config);
            b = SoftwareNic.open(config);
            ha = a.allocateHost(REGION);
            hb = b.allocateHost(REGION);
            da = a.allocateDevice(context, REGION);
            db = b.allocateDevice(context, REGION);
            hma = a.register(ha, Access.ALL);
            hmb = b.register(hb, Access.ALL);
            dma = a.register(da, Access.ALL);
            dmb = b.register(db, Access.ALL);
            qa = a.createQueuePair(QueuePairConfig.DEFAULT);
            qb = b.createQueuePair(QueuePairConfig.DEFAULT);
            qa.connect(qb.endpoint());
            qb.connect(qa.endpoint());
        }

        @Override
        public void close() {
            a.close();
            b.close();
        }
    }

    /**
     * @param args the shm base, then {@code all} or {@code copy-fails}
     */
    public static void main(String[] args) {
        Path base = Path.of(args[0]);
        try (CudaContext context = CudaContext.retainPrimary(CudaDriver.open().device(0))) {
            if (args[1].equals("copy-fails")) {
                copyFails(base, context);
            } else {
                all(base, context);
            }
        } catch (Throwable t) {
            System.out.println("FAIL main: " + t);
            t.printStackTrace(System.out);
        }
        System.out.println("end");
    }

    private static void all(Path base, CudaContext context) {
        scenario("send-host-to-device", () -> {
            try (Pair p = new Pair(base, context)) {
                p.db.fill(0, REGION, FILL);
                byte[] data = pattern(1, 3000);
                write(p.ha.segment(), 100, data);
                p.qb.postRecv(new RecvWorkRequest().wrId(7).sge(p.dmb, 4096, 4000));
                p.qa.postSend(new SendWorkRequest().wrId(8).sge(p.hma, 100, 3000));
                check(awaitSuccess(p.qa.sendCq()).wrId() == 8, "send wr id");
                Completion r = awaitSuccess(p.qb.recvCq());
                check(r.wrId() == 7 && r.byteLength() == 3000 && r.opcode() == CompletionOpcode.RECV, r.toString());
                checkBytes(data, read(p.db, 4096, 3000), "payload in device memory");
                checkUntouched(p.db, 0, 4096, "before the receive buffer");
                checkUntouched(p.db, 4096 + 3000, REGION - 4096 - 3000, "after the message");
            }
        });
        scenario("send-with-imm-gathers-device-and-host-scatters-into-both", () -> {
            try (Pair p = new Pair(base, context)) {
                byte[] d = pattern(2, 1000);
                byte[] h = pattern(3, 500);
                write(p.da, 0, d);
                write(p.ha.segment(), 0, h);
                p.qb.postRecv(new RecvWorkRequest().wrId(1).sge(p.hmb, 64, 700).sge(p.dmb, 8192, 2000));
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.SEND_WITH_IMM).immediate(0x5EED).sge(p.dma, 0, 1000)
                        .sge(p.hma, 0, 500));
                awaitSuccess(p.qa.sendCq());
                Completion r = awaitSuccess(p.qb.recvCq());
                check(r.hasImmediate() && r.immediate() == 0x5EED && r.byteLength() == 1500, r.toString());
                byte[] sent = concat(d, h);
                checkBytes(java.util.Arrays.copyOfRange(sent, 0, 700), read(p.hb.segment(), 64, 700), "host part");
                checkBytes(java.util.Arrays.copyOfRange(sent, 700, 1500), read(p.db, 8192, 800), "device part");
                checkUntouched(p.db, 8192 + 800, 16, "after the device part", (byte) 0);
            }
        });
        scenario("rdma-write-host-to-device", () -> {
            try (Pair p = new Pair(base, context)) {
                p.db.fill(0, REGION, FILL);
                byte[] data = pattern(4, 777);
                write(p.ha.segment(), 0, data);
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.hma, 0, 777)
                        .remote(p.dmb.address() + 12345, p.dmb.rkey()));
                check(awaitSuccess(p.qa.sendCq()).opcode() == CompletionOpcode.RDMA_WRITE, "opcode");
                checkBytes(data, read(p.db, 12345, 777), "written bytes");
                checkUntouched(p.db, 0, 12345, "before the target");
                checkUntouched(p.db, 12345 + 777, REGION - 12345 - 777, "after the target");
                DeviceTestSupport.check(p.qb.recvCq().poll(new Completion()) == 0, "no receive completion");
            }
        });
        scenario("rdma-write-with-imm-device-to-device", () -> {
            try (Pair p = new Pair(base, context)) {
                byte[] data = pattern(5, 5000);
                write(p.da, 1000, data);
                p.qb.postRecv(new RecvWorkRequest().wrId(77).sge(p.hmb, 0, 8));
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE_WITH_IMM).immediate(4321)
                        .sge(p.dma, 1000, 5000).remote(p.dmb.address() + 20000, p.dmb.rkey()));
                awaitSuccess(p.qa.sendCq());
                Completion r = awaitSuccess(p.qb.recvCq());
                check(r.opcode() == CompletionOpcode.RECV_RDMA_WITH_IMM && r.immediate() == 4321 && r.byteLength() == 5000,
                        r.toString());
                checkBytes(data, read(p.db, 20000, 5000), "written bytes");
                checkUntouched(p.db, 0, 20000, "before the target", (byte) 0);
            }
        });
        scenario("rdma-write-device-to-host", () -> {
            try (Pair p = new Pair(base, context)) {
                byte[] data = pattern(6, 4096);
                write(p.da, 0, data);
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.dma, 0, 4096)
                        .remote(p.hmb.address() + 8192, p.hmb.rkey()));
                awaitSuccess(p.qa.sendCq());
                checkBytes(data, read(p.hb.segment(), 8192, 4096), "written bytes");
                checkBytes(new byte[8192], read(p.hb.segment(), 0, 8192), "before the target");
            }
        });
        scenario("rdma-read-from-device-into-host-and-device", () -> {
            try (Pair p = new Pair(base, context)) {
                byte[] data = pattern(7, 3000);
                write(p.db, 30000, data);
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_READ).sge(p.hma, 50, 1000).sge(p.dma, 7000, 2000)
                        .remote(p.dmb.address() + 30000, p.dmb.rkey()));
                Completion s = awaitSuccess(p.qa.sendCq());
                check(s.opcode() == CompletionOpcode.RDMA_READ && s.byteLength() == 3000, s.toString());
                checkBytes(java.util.Arrays.copyOfRange(data, 0, 1000), read(p.ha.segment(), 50, 1000), "host part");
                checkBytes(java.util.Arrays.copyOfRange(data, 1000, 3000), read(p.da, 7000, 2000), "device part");
            }
        });
        scenario("rdma-read-from-host-into-device", () -> {
            try (Pair p = new Pair(base, context)) {
                byte[] data = pattern(8, 2048);
                write(p.hb.segment(), 4096, data);
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_READ).sge(p.dma, 0, 2048)
                        .remote(p.hmb.address() + 4096, p.hmb.rkey()));
                awaitSuccess(p.qa.sendCq());
                checkBytes(data, read(p.da, 0, 2048), "read bytes");
            }
        });
        scenario("prepared-send-rung-by-plain-stores-runs-on-the-agent", () -> {
            try (Pair p = new Pair(base, context)) {
                byte[] data = pattern(9, 512);
                write(p.da, 0, data);
                p.qb.postRecv(new RecvWorkRequest().sge(p.dmb, 0, 512));
                SendRequest s = p.qa.prepareSend(new SendWorkRequest().sge(p.dma, 0, 512));
                s.expectPlainStoreRing();
                Memop.Write32 dbrec = (Memop.Write32) s.memops().get(0);
                Memop.Write64 db = (Memop.Write64) s.memops().get(1);
                Thread t = new Thread(() -> {
                    dbrec.target().set32(dbrec.value(), true);
                    db.target().set64(db.value(), false);
                });
                t.start();
                t.join();
                awaitSuccess(p.qb.recvCq());
                checkBytes(data, read(p.db, 0, 512), "payload");
            }
        });
        scenario("prepared-send-posted-on-the-cpu", () -> {
            try (Pair p = new Pair(base, context)) {
                byte[] data = pattern(10, 100);
                write(p.ha.segment(), 0, data);
                p.qb.postRecv(new RecvWorkRequest().sge(p.dmb, 100, 100));
                SendRequest s = p.qa.prepareSend(new SendWorkRequest().sge(p.hma, 0, 100));
                Descriptors.postOnCpu(List.of(new Descriptor.Send(s)), WaitPolicy.defaults());
                awaitSuccess(p.qb.recvCq());
                checkBytes(data, read(p.db, 100, 100), "payload");
            }
        });
        scenario("forged-rkey-on-device-memory", () -> {
            try (Pair p = new Pair(base, context)) {
                p.db.fill(0, REGION, FILL);
                write(p.ha.segment(), 0, pattern(11, 256));
                long forged = p.dmb.rkey() ^ (0x5AL << 24);
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.hma, 0, 256)
                        .remote(p.dmb.address() + 1024, forged));
                awaitFailure(p.qa.sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
                check(p.qa.state() == QpState.ERROR, "the queue pair is in error: " + p.qa);
                checkUntouched(p.db, 0, REGION, "the whole device region");
            }
        });
        scenario("out-of-bounds-on-device-memory", () -> {
            try (Pair p = new Pair(base, context)) {
                p.db.fill(0, REGION, FILL);
                MemoryRegion sub = p.b.register(p.db, 16384, 4096, Access.ALL);
                write(p.ha.segment(), 0, pattern(12, 128));
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.hma, 0, 128)
                        .remote(sub.address() + 4096 - 64, sub.rkey()));
                awaitFailure(p.qa.sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.REMOTE_OUT_OF_BOUNDS);
                checkUntouched(p.db, 0, REGION, "the whole device region");
            }
        });
        scenario("read-out-of-bounds-on-device-memory", () -> {
            try (Pair p = new Pair(base, context)) {
                p.da.fill(0, REGION, FILL);
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_READ).sge(p.dma, 0, 200)
                        .remote(p.dmb.address() + REGION - 100, p.dmb.rkey()));
                awaitFailure(p.qa.sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.REMOTE_OUT_OF_BOUNDS);
                checkUntouched(p.da, 0, REGION, "the local device region");
            }
        });
        scenario("receive-too-small-in-device-memory", () -> {
            try (Pair p = new Pair(base, context)) {
                p.db.fill(0, REGION, FILL);
                p.qb.postRecv(new RecvWorkRequest().wrId(3).sge(p.dmb, 0, 100));
                p.qa.postSend(new SendWorkRequest().sge(p.hma, 0, 101));
                awaitFailure(p.qa.sendCq(), CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.RECV_TOO_SMALL);
                awaitFailure(p.qb.recvCq(), CompletionStatus.LOC_LEN_ERR, ErrorDetail.RECV_TOO_SMALL);
                checkUntouched(p.db, 0, REGION, "the whole device region");
            }
        });
        scenario("atomics-on-device-memory-are-refused", () -> {
            try (Pair p = new Pair(base, context)) {
                p.db.fill(0, REGION, FILL);
                int free = p.qa.sendQueueFree();
                IllegalArgumentException local = expectRefusal(() -> p.qa.postSend(new SendWorkRequest()
                        .opcode(Opcode.ATOMIC_FETCH_ADD).compareAdd(1).sge(p.dma, 0, 8).remote(p.hmb.address(), p.hmb.rkey())));
                check(local.getMessage().contains("is GPU memory: give a host buffer"), local.getMessage());
                expectRefusal(() -> p.qa.prepareSend(new SendWorkRequest().opcode(Opcode.ATOMIC_CMP_SWAP).sge(p.dma, 0, 8)
                        .remote(p.hmb.address(), p.hmb.rkey())));
                check(p.qa.sendQueueFree() == free && p.qa.state() == QpState.READY, "nothing posted: " + p.qa);
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.ATOMIC_FETCH_ADD).compareAdd(5).sge(p.hma, 0, 8)
                        .remote(p.dmb.address() + 64, p.dmb.rkey()));
                awaitFailure(p.qa.sendCq(), CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.DEVICE_ATOMIC);
                checkUntouched(p.db, 0, REGION, "the whole device region");
                check(p.ha.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, 0) == 0, "no original value returned");
            }
        });
        scenario("inline-from-device-memory-is-refused", () -> {
            try (Pair p = new Pair(base, context)) {
                int free = p.qa.sendQueueFree();
                IllegalArgumentException e = expectRefusal(() -> p.qa.postSend(new SendWorkRequest()
                        .flags(SendFlags.INLINE | SendFlags.SIGNALED).sge(p.dma, 0, 8)));
                check(e.getMessage().contains("INLINE") && e.getMessage().contains("GPU memory"), e.getMessage());
                expectRefusal(() -> p.qa.prepareSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE)
                        .flags(SendFlags.INLINE).sge(p.hma, 0, 8).sge(p.dma, 0, 8).remote(p.hmb.address(), p.hmb.rkey())));
                check(p.qa.sendQueueFree() == free && p.qa.state() == QpState.READY, "nothing posted: " + p.qa);
                // The queue pair still works, INLINE from host memory too.
                p.ha.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, 0, 42);
                p.qb.postRecv(new RecvWorkRequest().sge(p.dmb, 0, 8));
                p.qa.postSend(new SendWorkRequest().flags(SendFlags.INLINE | SendFlags.SIGNALED).sge(p.hma, 0, 8));
                awaitSuccess(p.qb.recvCq());
                check(read(p.db, 0, 1)[0] == 42, "inline payload delivered into device memory");
            }
        });
        scenario("deregistration-invalidates-at-once", () -> {
            try (Pair p = new Pair(base, context)) {
                MemoryRegion second = p.b.register(p.db, Access.ALL);
                write(p.ha.segment(), 0, pattern(13, 64));
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.hma, 0, 64)
                        .remote(second.address(), second.rkey()));
                awaitSuccess(p.qa.sendCq());
                p.b.deregister(second);
                check(!second.isValid(), "deregistered");
                IllegalArgumentException e = expectRefusal(() -> p.qb.postRecv(new RecvWorkRequest().sge(second, 0, 8)));
                check(e.getMessage().contains("matches no live memory region"), e.getMessage());
                write(p.ha.segment(), 0, pattern(14, 64));
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.hma, 0, 64)
                        .remote(second.address() + 128, second.rkey()));
                awaitFailure(p.qa.sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
                checkBytes(new byte[64], read(p.db, 128, 64), "nothing written with the stale key");
            }
        });
        scenario("closing-a-device-region-ends-its-registrations-and-frees-it", () -> {
            try (Pair p = new Pair(base, context)) {
                Path handle = p.b.directory().file("device-" + p.db.id());
                check(Files.exists(handle), "handle file published: " + handle);
                int before = p.b.registrations();
                long rkey = p.dmb.rkey();
                long address = p.dmb.address();
                p.db.close();
                check(!p.dmb.isValid() && p.b.registrations() == before - 1, "registration ended");
                check(!Files.exists(handle), "handle file removed");
                expectState(() -> p.db.fill(0, 1, (byte) 1));
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.hma, 0, 8).remote(address, rkey));
                awaitFailure(p.qa.sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
                System.out.println("freed 0x" + Long.toHexString(address));
            }
        });
        scenario("device-memory-has-no-host-segment", () -> {
            try (Pair p = new Pair(base, context)) {
                check(p.da.kind() == dev.gdasync.gdsync.memory.RegionKind.DEVICE && p.da.length() == REGION, p.da.toString());
                expectUnsupported(p.da::segment);
                expectUnsupported(p.dma::segment);
                check(p.dma.address() == p.da.address() && p.dma.region() == p.da, "the MR names the device pointer");
            }
        });
        scenario("device-regions-are-registered-by-their-nic-only", () -> {
            try (Pair p = new Pair(base, context)) {
                IllegalArgumentException e = expectRefusal(() -> p.b.register(p.da, Access.ALL));
                check(e.getMessage().contains("not allocated by"), e.getMessage());
                expectRefusal(() -> p.a.register(p.da, 0, REGION + 1, Access.ALL));
                expectRefusal(() -> p.a.register(p.da, Access.REMOTE_WRITE));
                expectRefusal(() -> p.a.allocateDevice(context, 0));
            }
        });
        scenario("one-nic-serves-one-gpu", () -> {
            if (CudaDriver.open().devices().size() < 2) {
                System.out.println("skip one-nic-serves-one-gpu: one device");
                return;
            }
            try (Pair p = new Pair(base, context); CudaContext other = CudaContext.retainPrimary(CudaDriver.open().device(1))) {
                IllegalArgumentException e = expectRefusal(() -> p.a.allocateDevice(other, 4096));
                check(e.getMessage().contains("one software NIC serves one GPU"), e.getMessage());
            }
        });
        scenario("a-closed-nic-frees-its-device-memory", () -> {
            Pair p = new Pair(base, context);
            Path dir = p.a.directory().processDirectory();
            p.close();
            check(!p.da.isOpen() && !p.db.isOpen(), "regions closed");
            check(!Files.exists(dir), "directory removed");
            expectState(() -> p.a.allocateDevice(context, 64));
        });
    }

    /** The copy stream fails (the fake's FAKE_CUDA_MEMCPY_ASYNC_RESULT): error completions, no hang. */
    private static void copyFails(Path base, CudaContext context) {
        scenario("a-failed-device-copy-fails-the-request", () -> {
            try (Pair p = new Pair(base, context)) {
                p.qb.postRecv(new RecvWorkRequest().wrId(5).sge(p.dmb, 0, 64));
                p.qa.postSend(new SendWorkRequest().wrId(6).sge(p.hma, 0, 64));
                awaitFailure(p.qa.sendCq(), CompletionStatus.GENERAL_ERR, ErrorDetail.DEVICE_COPY_FAILED);
                Completion r = await(p.qb.recvCq());
                check(!r.isSuccess() && r.detail() == ErrorDetail.DEVICE_COPY_FAILED && r.wrId() == 5, r.toString());
                check(p.qa.state() == QpState.ERROR, "queue pair in error: " + p.qa);
            }
        });
        scenario("host-traffic-is-unaffected-by-a-failing-copy-stream", () -> {
            try (Pair p = new Pair(base, context)) {
                byte[] data = pattern(15, 64);
                write(p.ha.segment(), 0, data);
                p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.hma, 0, 64)
                        .remote(p.hmb.address(), p.hmb.rkey()));
                awaitSuccess(p.qa.sendCq());
                checkBytes(data, read(p.hb.segment(), 0, 64), "host to host");
            }
        });
    }

    private static void checkUntouched(DeviceRegion r, long offset, int len, String what) {
        checkUntouched(r, offset, len, what, FILL);
    }

    private static void checkUntouched(DeviceRegion r, long offset, int len, String what, byte fill) {
        byte[] expected = new byte[len];
        java.util.Arrays.fill(expected, fill);
        checkBytes(expected, read(r, offset, len), what + " unchanged");
    }

    private static byte[] concat(byte[] x, byte[] y) {
        byte[] b = java.util.Arrays.copyOf(x, x.length + y.length);
        System.arraycopy(y, 0, b, x.length, y.length);
        return b;
    }

    private static IllegalArgumentException expectRefusal(Runnable r) {
        try {
            r.run();
        } catch (IllegalArgumentException e) {
            return e;
        }
        throw new AssertionError("expected an IllegalArgumentException");
    }

    private static void expectState(Runnable r) {
        try {
            r.run();
        } catch (IllegalStateException e) {
            return;
        }
        throw new AssertionError("expected an IllegalStateException");
    }

    private static void expectUnsupported(Runnable r) {
        try {
            r.run();
        } catch (UnsupportedOperationException e) {
            check(e.getMessage().contains("GPU memory"), e.getMessage());
            return;
        }
        throw new AssertionError("expected an UnsupportedOperationException");
    }
}
