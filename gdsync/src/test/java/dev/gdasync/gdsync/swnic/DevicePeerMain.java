package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.DeviceRegion;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.shm.ShmTransport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;

import static dev.gdasync.gdsync.swnic.DeviceTestSupport.WAIT;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.await;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.awaitFailure;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.awaitNoPeerMappings;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.awaitState;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.awaitSuccess;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.check;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.checkBytes;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.pattern;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.read;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.scenario;
import static dev.gdasync.gdsync.swnic.DeviceTestSupport.write;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A child JVM of {@link DeviceIpcTest}: one of two processes whose software NICs reach each other's device
 * memory through CUDA IPC. They meet through two files in a shared folder ({@code owner.properties},
 * {@code user.properties}: endpoints, addresses and keys), then talk over a control queue pair: the user
 * runs a step, sends its number as an immediate; the owner checks its memory and answers 0 (or 1 on a
 * mismatch).
 *
 * <p>The owner keeps a host copy of what its device region must hold and compares the whole region after
 * every step, so a byte written anywhere else fails the step. Arguments: {@code owner <folder> <shm base>
 * close|halt} or {@code user|user-host <folder> <shm base>}; {@code user-host} allocates no device memory
 * (and runs without a driver library too).
 */
public final class DevicePeerMain {
    static final int REGION = 64 * 1024;
    static final int QPS = 6; // main, control, forged key, out of bounds, atomic, deregistered
    static final int MAIN = 0;
    static final int CTL = 1;
    static final int BYE = 99;

    private DevicePeerMain() {
    }

    /**
     * @param args see the class comment
     */
    public static void main(String[] args) {
        Path folder = Path.of(args[1]);
        Path base = Path.of(args[2]);
        try {
            switch (args[0]) {
                case "owner" -> new Owner(folder, base).run(args[3]);
                case "user" -> new User(folder, base, true).run();
                case "user-host" -> new User(folder, base, false).run();
                default -> throw new IllegalArgumentException(args[0]);
            }
        } catch (Throwable t) {
            System.out.println("FAIL main: " + t);
            t.printStackTrace(System.out);
        }
        System.out.println("end");
    }

    static SwNicConfig config(Path base) {
        return SwNicConfig.defaults().withShmBase(base).withJobId("ipc");
    }

    static QueuePair[] queuePairs(SoftwareNic nic) {
        QueuePair[] q = new QueuePair[QPS];
        for (int i = 0; i < QPS; i++) {
            q[i] = nic.createQueuePair(QueuePairConfig.DEFAULT);
        }
        return q;
    }

    static void publish(Path folder, String name, Properties p) throws IOException {
        Path tmp = folder.resolve(name + ".tmp");
        try (var out = Files.newOutputStream(tmp)) {
            p.store(out, null);
        }
        Files.move(tmp, folder.resolve(name), StandardCopyOption.ATOMIC_MOVE);
    }

    static Properties awaitFile(Path folder, String name) throws IOException {
        Path f = folder.resolve(name);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!Files.exists(f)) {
            check(System.nanoTime() - deadline < 0, "no " + name + " within " + WAIT.toSeconds() + " s");
            LockSupport.parkNanos(5_000_000);
        }
        Properties p = new Properties();
        try (var in = Files.newInputStream(f)) {
            p.load(in);
        }
        return p;
    }

    static void putEndpoints(Properties p, QueuePair[] q) {
        for (int i = 0; i < q.length; i++) {
            p.setProperty("qp" + i, q[i].endpoint().toHex());
        }
    }

    static void connect(QueuePair[] q, Properties peer) {
        for (int i = 0; i < q.length; i++) {
            q[i].connect(Endpoint.fromHex(peer.getProperty("qp" + i)));
        }
    }

    static void putMr(Properties p, String name, MemoryRegion mr) {
        p.setProperty(name + ".address", Long.toString(mr.address()));
        p.setProperty(name + ".rkey", Long.toString(mr.rkey()));
    }

    static long address(Properties p, String name) {
        return Long.parseLong(p.getProperty(name + ".address"));
    }

    static long rkey(Properties p, String name) {
        return Long.parseLong(p.getProperty(name + ".rkey"));
    }

    /** The process whose device memory the other one reaches. */
    private static final class Owner {
        private final Path folder;
        private final Path base;
        private final byte[] shadowDevice = new byte[REGION];
        private final byte[] shadowHost = new byte[REGION];

        Owner(Path folder, Path base) {
            this.folder = folder;
            this.base = base;
        }

        void run(String ending) throws Exception {
            CudaContext context = CudaContext.retainPrimary(CudaDriver.open().device(0));
            SoftwareNic nic = SoftwareNic.open(config(base));
            HostRegion ha = nic.allocateHost(REGION);
            DeviceRegion da = nic.allocateDevice(context, REGION);
            MemoryRegion hma = nic.register(ha, Access.ALL);
            MemoryRegion dma = nic.register(da, Access.ALL);
            MemoryRegion second = nic.register(da, Access.ALL);
            MemoryRegion sub = nic.register(da, 49152, 4096, Access.ALL);
            byte[] p6 = pattern(6, 4096);
            write(da, 32768, p6);
            System.arraycopy(p6, 0, shadowDevice, 32768, p6.length);
            QueuePair[] q = queuePairs(nic);
            // Receives for the user's SENDs and RDMA_WRITE_WITH_IMM on the main queue pair, in step order.
            q[MAIN].postRecv(new RecvWorkRequest().wrId(1).sge(dma, 0, 4096));
            q[MAIN].postRecv(new RecvWorkRequest().wrId(2).sge(dma, 8192, 2000).sge(hma, 0, 4000));
            q[MAIN].postRecv(new RecvWorkRequest().wrId(4).sge(hma, 12288, 64));
            for (int i = 0; i < 32; i++) {
                q[CTL].postRecv(new RecvWorkRequest().wrId(1000 + i).sge(hma, 60000 + i * 8L, 8));
            }
            Properties mine = new Properties();
            putEndpoints(mine, q);
            putMr(mine, "device", dma);
            putMr(mine, "second", second);
            putMr(mine, "sub", sub);
            putMr(mine, "host", hma);
            mine.setProperty("pid", Long.toString(ProcessHandle.current().pid()));
            mine.setProperty("freed", "0x" + Long.toHexString(da.address()));
            publish(folder, "owner.properties", mine);
            Properties user = awaitFile(folder, "user.properties");
            connect(q, user);
            System.out.println("device 0x" + Long.toHexString(da.address()));
            ack(q, hma, 0, 0);
            scenario("owner-serves-every-step", () -> {
                for (int n = 0; ; n++) {
                    Completion c = awaitSuccess(q[CTL].recvCq());
                    int step = c.immediate();
                    String problem = checkStep(step, q, ha, da);
                    if (step == 9 && problem == null) {
                        nic.deregister(second); // step 10 uses its key
                    }
                    ack(q, hma, n + 1, problem == null ? 0 : 1);
                    if (problem != null) {
                        throw new AssertionError("step " + step + ": " + problem);
                    }
                    System.out.println("ok owner-step-" + step);
                    if (step == BYE) {
                        return;
                    }
                }
            });
            if (ending.equals("halt")) {
                System.out.println("halting");
                System.out.flush();
                Runtime.getRuntime().halt(0);
            }
            // Wait until the user has seen the last answer: its NIC notices ours closing at once.
            Properties done = awaitFile(folder, "user.done");
            check(done.getProperty("seen").equals("yes"), "user saw the answer");
            nic.close();
            context.close();
            System.out.println("ok owner-closed");
        }

        /** @return null when the memory holds what the step promised, else what differs */
        private String checkStep(int step, QueuePair[] q, HostRegion ha, DeviceRegion da) {
            try {
                switch (step) {
                    case 1 -> {
                        Completion r = awaitSuccess(q[MAIN].recvCq());
                        check(r.wrId() == 1 && r.byteLength() == 3000, r.toString());
                        System.arraycopy(pattern(1, 3000), 0, shadowDevice, 0, 3000);
                    }
                    case 2 -> {
                        Completion r = awaitSuccess(q[MAIN].recvCq());
                        check(r.wrId() == 2 && r.byteLength() == 5000 && r.immediate() == 0x1234, r.toString());
                        byte[] p2 = pattern(2, 5000);
                        System.arraycopy(p2, 0, shadowDevice, 8192, 2000);
                        System.arraycopy(p2, 2000, shadowHost, 0, 3000);
                    }
                    case 3 -> System.arraycopy(pattern(3, 777), 0, shadowDevice, 16384, 777);
                    case 4 -> {
                        Completion r = awaitSuccess(q[MAIN].recvCq());
                        check(r.wrId() == 4 && r.opcode() == CompletionOpcode.RECV_RDMA_WITH_IMM && r.immediate() == 4
                                && r.byteLength() == 5000, r.toString());
                        System.arraycopy(pattern(2, 5000), 0, shadowDevice, 20480, 5000);
                    }
                    case 5 -> System.arraycopy(pattern(2, 5000), 0, shadowHost, 8192, 5000);
                    case 11 -> System.arraycopy(pattern(11, 100), 0, shadowHost, 20000, 100);
                    default -> {
                        // 6 to 10, 12 and BYE write nothing here
                    }
                }
                checkBytes(shadowDevice, read(da, 0, REGION), "device region after step " + step);
                byte[] host = read(ha.segment(), 0, REGION);
                Arrays.fill(host, 60000, REGION, (byte) 0); // control messages
                checkBytes(shadowHost, host, "host region after step " + step);
                return null;
            } catch (Throwable t) {
                return t.toString();
            }
        }

        private static void ack(QueuePair[] q, MemoryRegion hma, int n, long value) {
            long off = 50000 + (n % 32) * 8L;
            hma.region().segment().set(JAVA_LONG, off, value);
            q[CTL].postSend(new SendWorkRequest().wrId(n).sge(hma, off, 8));
            awaitSuccess(q[CTL].sendCq());
        }
    }

    /** The process that reaches the owner's device memory. */
    private static final class User {
        private final Path folder;
        private final Path base;
        private final boolean withDevice;
        private int acks;

        User(Path folder, Path base, boolean withDevice) {
            this.folder = folder;
            this.base = base;
            this.withDevice = withDevice;
        }

        void run() throws Exception {
            SoftwareNic nic = SoftwareNic.open(config(base));
            HostRegion hb = nic.allocateHost(REGION);
            MemoryRegion hmb = nic.register(hb, Access.ALL);
            DeviceRegion db = null;
            MemoryRegion dmb = null;
            CudaContext context = null;
            if (withDevice) {
                context = CudaContext.retainPrimary(CudaDriver.open().device(0));
                db = nic.allocateDevice(context, REGION);
                dmb = nic.register(db, Access.ALL);
            }
            QueuePair[] q = queuePairs(nic);
            for (int i = 0; i < 32; i++) {
                q[CTL].postRecv(new RecvWorkRequest().wrId(2000 + i).sge(hmb, 60000 + i * 8L, 8));
            }
            Properties owner = awaitFile(folder, "owner.properties");
            connect(q, owner);
            Properties mine = new Properties();
            putEndpoints(mine, q);
            publish(folder, "user.properties", mine);
            awaitAck(q, hmb, 0);
            if (withDevice) {
                deviceSteps(q, hb, hmb, db, dmb, owner);
            } else {
                hostSteps(q, hb, hmb, owner);
            }
            step(q, hmb, BYE, () -> {
            });
            Properties done = new Properties();
            done.setProperty("seen", "yes");
            publish(folder, "user.done", done);
            QueuePair peer = q[MAIN];
            scenario("the-owner-going-away-unmaps-its-device-memory", () -> {
                awaitState(q[MAIN], QpState.ERROR);
                check(q[MAIN].errorDetail() == ErrorDetail.PEER_CLOSED || q[MAIN].errorDetail() == ErrorDetail.PEER_DEAD,
                        q[MAIN].toString());
                awaitNoPeerMappings(peer);
                System.out.println("peer-left " + q[MAIN].errorDetail());
            });
            nic.close();
            if (context != null) {
                context.close();
            }
            System.out.println("ok user-closed");
        }

        private void deviceSteps(QueuePair[] q, HostRegion hb, MemoryRegion hmb, DeviceRegion db, MemoryRegion dmb,
                                 Properties owner) {
            write(hb.segment(), 0, pattern(1, 3000));
            write(hb.segment(), 4096, pattern(3, 777));
            write(db, 0, pattern(2, 5000));
            long device = address(owner, "device");
            long deviceKey = rkey(owner, "device");
            step(q, hmb, 1, () -> {
                q[MAIN].postSend(new SendWorkRequest().sge(hmb, 0, 3000));
                awaitSuccess(q[MAIN].sendCq());
            });
            step(q, hmb, 2, () -> {
                q[MAIN].postSend(new SendWorkRequest().opcode(Opcode.SEND_WITH_IMM).immediate(0x1234).sge(dmb, 0, 5000));
                awaitSuccess(q[MAIN].sendCq());
            });
            step(q, hmb, 3, () -> {
                q[MAIN].postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(hmb, 4096, 777)
                        .remote(address(owner, "second") + 16384, rkey(owner, "second")));
                awaitSuccess(q[MAIN].sendCq());
            });
            step(q, hmb, 4, () -> {
                q[MAIN].postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE_WITH_IMM).immediate(4).sge(dmb, 0, 5000)
                        .remote(device + 20480, deviceKey));
                awaitSuccess(q[MAIN].sendCq());
            });
            step(q, hmb, 5, () -> {
                q[MAIN].postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(dmb, 0, 5000)
                        .remote(address(owner, "host") + 8192, rkey(owner, "host")));
                awaitSuccess(q[MAIN].sendCq());
            });
            step(q, hmb, 6, () -> {
                q[MAIN].postSend(new SendWorkRequest().opcode(Opcode.RDMA_READ).sge(hmb, 16384, 1000).sge(dmb, 8192, 3096)
                        .remote(device + 32768, deviceKey));
                Completion c = awaitSuccess(q[MAIN].sendCq());
                check(c.byteLength() == 4096, c.toString());
                byte[] p6 = pattern(6, 4096);
                checkBytes(Arrays.copyOfRange(p6, 0, 1000), read(hb.segment(), 16384, 1000), "read into host");
                checkBytes(Arrays.copyOfRange(p6, 1000, 4096), read(db, 8192, 3096), "read into device");
            });
            step(q, hmb, 7, () -> {
                q[2].postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(hmb, 0, 4096)
                        .remote(device + 40960, deviceKey ^ (0x5AL << 24)));
                awaitFailure(q[2].sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
            });
            step(q, hmb, 8, () -> {
                q[3].postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(hmb, 0, 128)
                        .remote(address(owner, "sub") + 4096 - 64, rkey(owner, "sub")));
                awaitFailure(q[3].sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.REMOTE_OUT_OF_BOUNDS);
            });
            step(q, hmb, 9, () -> {
                q[4].postSend(new SendWorkRequest().opcode(Opcode.ATOMIC_FETCH_ADD).compareAdd(1).sge(hmb, 24576, 8)
                        .remote(device + 40960, deviceKey));
                awaitFailure(q[4].sendCq(), CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.DEVICE_ATOMIC);
            });
            // The owner deregistered "second" before answering step 9; its region stays mapped here.
            step(q, hmb, 10, () -> {
                q[5].postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(hmb, 0, 64)
                        .remote(address(owner, "second"), rkey(owner, "second")));
                awaitFailure(q[5].sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
                QueuePair peer = q[MAIN];
                check(ShmTransport.peerMappings(peer) == 1, "the owner's region stays mapped once: " + ShmTransport.peerMappings(peer));
            });
        }

        private void hostSteps(QueuePair[] q, HostRegion hb, MemoryRegion hmb, Properties owner) {
            write(hb.segment(), 0, pattern(11, 100));
            step(q, hmb, 11, () -> {
                q[MAIN].postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(hmb, 0, 100)
                        .remote(address(owner, "host") + 20000, rkey(owner, "host")));
                awaitSuccess(q[MAIN].sendCq());
            });
            step(q, hmb, 12, () -> {
                q[2].postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(hmb, 0, 64)
                        .remote(address(owner, "device"), rkey(owner, "device")));
                awaitFailure(q[2].sendCq(), CompletionStatus.REM_ACCESS_ERR, ErrorDetail.DEVICE_UNREACHABLE);
                QueuePair peer = q[MAIN];
                check(ShmTransport.peerMappings(peer) == 0, "nothing mapped");
            });
        }

        /** Runs a step, tells the owner, and checks its answer. */
        private void step(QueuePair[] q, MemoryRegion hmb, int n, DeviceTestSupport.Body body) {
            scenario("user-step-" + n, () -> {
                body.run();
                long off = 50000 + (n % 32) * 8L;
                hmb.region().segment().set(JAVA_LONG, off, n);
                q[CTL].postSend(new SendWorkRequest().opcode(Opcode.SEND_WITH_IMM).immediate(n).sge(hmb, off, 8));
                awaitSuccess(q[CTL].sendCq());
                long answer = awaitAck(q, hmb, ++acks);
                check(answer == 0, "the owner found its memory wrong after step " + n);
            });
        }

        private static long awaitAck(QueuePair[] q, MemoryRegion hmb, int n) {
            Completion c = await(q[CTL].recvCq());
            check(c.isSuccess() && c.byteLength() == 8, "answer " + n + ": " + c);
            int slot = (int) (c.wrId() - 2000);
            return hmb.region().segment().get(JAVA_LONG, 60000 + slot * 8L);
        }
    }

}
