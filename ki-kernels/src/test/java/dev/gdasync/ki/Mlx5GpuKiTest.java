package dev.gdasync.ki;

import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.mlx5.CqWaitMode;
import dev.gdasync.gdsync.mlx5.Mlx5Nic;
import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.ki.cuda.CudaKiExecutor;
import dev.gdasync.ki.exec.HostKiExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A KI kernel on a real GPU drives the software mlx5 device: it rings mlx5 WQEs with {@code device.cuh}'s send (the
 * big-endian send counter to the doorbell record, a system fence, the control segment to the BlueFlame page, all in
 * registered host memory) and waits on the receive CQEs' owner bit, in a ping-pong with a host KI kernel on the other
 * side. Skipped, with the reason printed, where there is no GPU or no kernel image.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class Mlx5GpuKiTest {
    private static final long SECOND = 1_000_000_000L;

    @TempDir
    Path shm;

    @Test
    void aGpuPingPongKernelRingsAndWaitsOnTheSoftwareMlx5Device() throws Exception {
        Optional<String> reason = CudaDriver.unavailableReason();
        CudaKiExecutor gpu = null;
        if (reason.isEmpty()) {
            try {
                gpu = CudaKiExecutor.open(0);
            } catch (RuntimeException e) {
                reason = Optional.of("the CUDA KI executor did not open: " + e.getMessage());
            }
        }
        if (reason.isPresent()) {
            System.out.println("SKIPPED (GPU): " + reason.get());
        }
        assumeTrue(reason.isEmpty(), reason.orElse(""));
        int n = 200;
        int size = 64;
        SwNicConfig sw = SwNicConfig.defaults().withShmBase(shm).withJobId("gpumlx5");
        try (CudaKiExecutor ea = gpu; Link link = new Link(() -> Mlx5Nic.open(SoftMlx5Device.open(sw), CqWaitMode.OWNER));
             HostKiExecutor eb = HostKiExecutor.create("b", HostKiExecutor.Options.defaults()
                     .withAfterRing(link.b.nic::progressStoreRings));
             Arena arena = Arena.ofShared()) {
            KiTable.Builder ba = table(link.a, ea, n, size, 100);
            KiTable.Builder bb = table(link.b, eb, n, size, 900);
            KiTable ta = ba.writeTo(arena.allocate(ba.byteSize(), 4096));
            KiTable tb = bb.writeTo(arena.allocate(bb.byteSize(), 8));
            KiLaunch lb = eb.pingPong(tb, n, false, 0, 10 * SECOND);
            KiLaunch la = ea.pingPong(ta, n, true, 0, 10 * SECOND);
            la.join(Duration.ofSeconds(60));
            lb.join(Duration.ofSeconds(60));
            assertTrue(ta.status().isOk() && tb.status().isOk(), ta.status() + " / " + tb.status());
            List<Completion> ra = Link.reap(link.a.qp.recvCq(), n);
            Link.reap(link.b.qp.recvCq(), n);
            Link.reap(link.a.qp.sendCq(), n);
            Link.reap(link.b.qp.sendCq(), n);
            for (int i = 0; i < n; i++) {
                assertEquals(i, ra.get(i).wrId());
                Link.check(link.b.mem().asSlice(Link.REGION / 2 + (long) i * size, size), 100 + i, "b's receive " + i);
                Link.check(link.a.mem().asSlice(Link.REGION / 2 + (long) i * size, size), 900 + i, "a's receive " + i);
            }
        }
    }

    private static KiTable.Builder table(Link.Side me, KiExecutor ex, int n, int size, long seed) {
        for (int i = 0; i < n; i++) {
            me.qp.postRecv(new RecvWorkRequest().wrId(i).sge(me.mr, Link.REGION / 2 + (long) i * size, size));
        }
        KiTable.Builder b = KiTable.builder(ex);
        for (int i = 0; i < n; i++) {
            MemorySegment msg = me.mem().asSlice((long) i * size, size);
            Link.fill(msg, seed + i);
            SendRequest s = me.qp.prepareSend(new SendWorkRequest().wrId(i).sge(me.mr, (long) i * size, size));
            b.addSend(s);
            b.addWait(me.qp.prepareWaitCq(me.qp.recvCq()));
        }
        return b;
    }
}
