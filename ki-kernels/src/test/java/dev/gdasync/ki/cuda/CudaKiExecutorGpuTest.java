package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.cuda.CudaAddressMap;
import dev.gdasync.gdsync.cuda.CudaDevice;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.kernels.KiCopy;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The KI kernels on a real GPU, with tables written by hand (no NIC: the "doorbells" are words in
 * registered host memory). Skipped, with the reason printed, where there is no usable GPU or the build
 * has no kernel images.
 */
class CudaKiExecutorGpuTest {
    private static final Duration LIMIT = Duration.ofSeconds(30);
    private static final long SECOND = 1_000_000_000L;
    private static final int GEQ = 0;

    private static String skip;
    private static CudaKiExecutor executor;
    private static Arena arena;

    @BeforeAll
    static void open() {
        Optional<String> reason = CudaDriver.unavailableReason();
        if (reason.isEmpty()) {
            CudaDevice d = CudaDriver.open().device(0);
            KernelImages images = KernelImages.packaged(CudaKiExecutorGpuTest.class.getClassLoader());
            if (images.cubin(d.computeMajor(), d.computeMinor()).length == 0 && images.ptx().isEmpty()) {
                reason = Optional.of("the KI kernel resources (" + KernelImages.PTX + ", cubins) are absent from this "
                        + "build: " + images.contents());
            }
        }
        if (reason.isPresent()) {
            skip = reason.get();
            System.out.println("SKIPPED (GPU): " + skip);
            return;
        }
        executor = CudaKiExecutor.open(0);
        arena = Arena.ofShared();
        System.out.println("GPU tests on " + executor.description());
    }

    @AfterAll
    static void close() {
        if (executor != null) {
            executor.close();
            arena.close();
        }
    }

    private static void requireGpu() {
        assumeTrue(skip == null, skip);
    }

    private static long device(MemorySegment s, long offset, int width) {
        CudaAddressMap map = (CudaAddressMap) executor.addresses();
        return map.addressOf(width == 4 ? MemoryWord.word32(s, offset, "test word") : MemoryWord.word64(s, offset,
                "test word"));
    }

    @Test
    void pingPongRingsWaitsAndReleases() {
        requireGpu();
        MemorySegment w = arena.allocate(4096, 4096);
        w.set(ValueLayout.JAVA_INT, 16, 5);
        KiTable table = RawTable.write(arena.allocate(4096, 4096),
                List.of(new RawTable.Send(device(w, 0, 4), 1, device(w, 8, 8), 0xABCDL)),
                List.of(new RawTable.Wait(device(w, 16, 4), 5, GEQ, device(w, 24, 4), 77)), 0);
        executor.pingPong(table, 1, true, 0, SECOND).join(LIMIT);
        assertEquals(1, w.get(ValueLayout.JAVA_INT, 0), "doorbell record");
        assertEquals(0xABCDL, w.get(ValueLayout.JAVA_LONG, 8), "doorbell");
        assertEquals(77, w.get(ValueLayout.JAVA_INT, 24), "release flag");
    }

    @Test
    void aWaitThatNeverPassesTimesOutOnTheDeviceAndIsNamed() {
        requireGpu();
        MemorySegment w = arena.allocate(4096, 4096);
        KiTable table = RawTable.write(arena.allocate(4096, 4096),
                List.of(new RawTable.Send(device(w, 0, 4), 1, device(w, 8, 8), 1)),
                List.of(new RawTable.Wait(device(w, 16, 4), 1, GEQ, 0, 0)), 0);
        KiException e = assertThrows(KiException.class,
                () -> executor.pingPong(table, 1, false, 0, 1_000_000).join(LIMIT));
        assertEquals("ping-pong on " + executor.name() + " timed out waiting on wait entry 0", e.getMessage());
        assertEquals(KiTableLayout.STATUS_TIMEOUT, e.status().code());
        assertEquals(0, w.get(ValueLayout.JAVA_INT, 0), "the responder never sends after a failed wait");
    }

    @Test
    void templateSendsPatchTheWorkRequestThenRing() {
        requireGpu();
        MemorySegment w = arena.allocate(4096, 4096);
        MemorySegment wqe = arena.allocate(4096, 4096);
        long wqeDevice = ((CudaAddressMap) executor.addresses()).deviceAddressOf(wqe);
        KiTable table = RawTable.write(arena.allocate(4096, 4096), List.of(), List.of(), 1,
                List.of(new RawTable.Template(wqeDevice, device(w, 0, 4), 3, device(w, 8, 8), 0x77L, 0, 8, 16, 20, 24, 32)));
        executor.sendTemplates(table, List.of(new KiTemplateArgs(0x1000, 64, 0x22, 0x3000, 0x44))).join(LIMIT);
        assertEquals(0x1000L, wqe.get(ValueLayout.JAVA_LONG, 0));
        assertEquals(0x22L, wqe.get(ValueLayout.JAVA_LONG, 8));
        assertEquals(64, wqe.get(ValueLayout.JAVA_INT, 16));
        assertEquals(64, wqe.get(ValueLayout.JAVA_INT, 20));
        assertEquals(0x3000L, wqe.get(ValueLayout.JAVA_LONG, 24));
        assertEquals(0x44L, wqe.get(ValueLayout.JAVA_LONG, 32));
        assertEquals(3, w.get(ValueLayout.JAVA_INT, 0));
        assertEquals(0x77L, w.get(ValueLayout.JAVA_LONG, 8));
    }

    @Test
    void anExchangePacksSendsWaitsAndUnpacks() {
        requireGpu();
        MemorySegment w = arena.allocate(4096, 4096);
        w.set(ValueLayout.JAVA_INT, 16, 1);
        KiTable table = RawTable.write(arena.allocate(4096, 4096),
                List.of(new RawTable.Send(device(w, 0, 4), 1, device(w, 8, 8), 9)),
                List.of(new RawTable.Wait(device(w, 16, 4), 1, GEQ, 0, 0)), 0);
        MemorySegment data = arena.allocate(4 * 4096, 4096);
        for (int i = 0; i < 4096; i++) {
            data.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        KiCopy pack = new KiCopy(data.asSlice(0, 1024), data.asSlice(4096, 1024));
        KiCopy unpack = new KiCopy(data.asSlice(1024, 1024), data.asSlice(5120, 1024));
        KiCopy interior = new KiCopy(data.asSlice(2048, 2048), data.asSlice(8192, 2048));
        KiCopyWork work = new KiCopyWork(List.of(pack), List.of(unpack), interior, 4, 0);
        executor.exchange(table, new KiExchange(1, 1, work), SECOND).join(LIMIT);
        assertEquals(-1L, data.asSlice(0, 1024).mismatch(data.asSlice(4096, 1024)), "pack");
        assertEquals(-1L, data.asSlice(1024, 1024).mismatch(data.asSlice(5120, 1024)), "unpack");
        assertEquals(-1L, data.asSlice(2048, 2048).mismatch(data.asSlice(8192, 2048)), "interior");
        assertEquals(1, w.get(ValueLayout.JAVA_INT, 0), "sent");
    }

    @Test
    void moreBlocksThanTheGpuHoldsAreRefused() {
        requireGpu();
        long capacity = (long) executor.exchangeBlocksPerMultiprocessor() * executor.device().multiprocessors();
        assumeTrue(capacity < 8193, "this GPU holds 8193 exchange blocks");
        MemorySegment w = arena.allocate(4096, 4096);
        KiTable table = RawTable.counts(arena.allocate(4096, 4096), device(w, 0, 4), 1, 1, 0);
        KiException e = assertThrows(KiException.class, () -> executor.exchange(table,
                new KiExchange(4096, 4096, new KiCopyWork(List.of(), List.of(), null, 0, 0)), SECOND));
        assertTrue(e.getMessage().startsWith("exchange needs 8193 co-resident blocks of 128 threads; "), e.getMessage());
    }
}
