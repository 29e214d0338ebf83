package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDeviceToHost;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.gdsync.cuda.CudaPointers;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * On a machine with a GPU, its driver, GDRCopy's library and the gdrdrv module: real device memory pinned,
 * mapped, copied through, and waited on. Skips, printing why, anywhere else.
 */
class GdrCopyGpuTest {
    private static final WaitPolicy WAIT = WaitPolicy.lowLatency(Duration.ofSeconds(30));

    private static void requireHardware() {
        Optional<String> reason = CudaDriver.unavailableReason().or(GdrCopy::unavailableReason);
        reason.ifPresent(r -> System.out.println("SKIPPED (GPU with gdrdrv): " + r));
        assumeTrue(reason.isEmpty(), reason.orElse(""));
    }

    /** Device memory from cuMemAlloc, one GPU page more than asked, so an aligned part can be used. */
    private static final class DeviceMemory implements AutoCloseable {
        final CUdeviceptr pointer = CudaPointers.deviceOut();
        final long aligned;

        DeviceMemory(long bytes) {
            CudaException.check(JCudaDriver.cuMemAlloc(pointer, bytes + GdrCopy.GPU_PAGE_SIZE), "cuMemAlloc");
            long address = CudaPointers.address(pointer);
            aligned = (address + GdrCopy.GPU_PAGE_OFFSET) & GdrCopy.GPU_PAGE_MASK;
        }

        @Override
        public void close() {
            CudaException.check(JCudaDriver.cuMemFree(pointer), "cuMemFree");
        }
    }

    @Test
    void pinMapCopyAndReadBackThroughTheDriver() {
        requireHardware();
        try (CudaContext context = CudaContext.retainPrimary(CudaDriver.open().device(0));
             Arena arena = Arena.ofConfined();
             DeviceMemory memory = new DeviceMemory(GdrCopy.GPU_PAGE_SIZE);
             CudaDeviceToHost copies = CudaDeviceToHost.open(context);
             GdrCopy gdr = GdrCopy.open()) {
            System.out.println(gdr + ", gdrdrv " + gdr.driverVersion());
            GdrPin pin = gdr.pin(memory.aligned, GdrCopy.GPU_PAGE_SIZE);
            GdrMapping mapping = pin.map();
            System.out.println(mapping + " " + mapping.info());
            MemorySegment source = arena.allocate(4096);
            for (int i = 0; i < 4096; i++) {
                source.set(JAVA_BYTE, i, (byte) (i * 31 + 3));
            }
            mapping.copyTo(mapping.offset(), source);
            MemorySegment back = arena.allocate(4096);
            copies.copy(memory.aligned, back);
            assertEquals(-1, back.mismatch(source), "the driver reads what was written through the mapping");
            MemorySegment read = arena.allocate(4096);
            mapping.copyFrom(mapping.offset(), read);
            assertEquals(-1, read.mismatch(source));
            mapping.word32(mapping.offset() + 64, "flag").set32(77, true);
            MemorySegment word = arena.allocate(JAVA_INT);
            copies.copy(memory.aligned + 64, word);
            assertEquals(77, word.get(JAVA_INT, 0));
        }
    }

    @Test
    void theCpuWaitsOnAWordTheGpuWrites() {
        requireHardware();
        try (CudaContext context = CudaContext.retainPrimary(CudaDriver.open().device(0));
             DeviceMemory memory = new DeviceMemory(GdrCopy.GPU_PAGE_SIZE);
             GpuWords words = GpuWords.open(context)) {
            assertTrue(words.usesGdrCopy(), words::toString);
            CudaException.check(JCudaDriver.cuMemsetD32(wordPointer(memory, 128), 0, 1), "cuMemsetD32");
            GpuWordMirror flag = words.word32(memory.aligned + 128, "flag");
            Thread writer = Thread.ofPlatform().start(() -> {
                context.makeCurrent();
                CudaException.check(JCudaDriver.cuMemsetD32(wordPointer(memory, 128), 9, 1), "cuMemsetD32");
                CudaException.check(JCudaDriver.cuCtxSynchronize(), "cuCtxSynchronize");
            });
            HostMemops.await32(flag.word(), 9, WaitCondition.EQ, WAIT, new BackoffIdler(BackoffPolicy.LOW_LATENCY),
                    () -> false);
            assertEquals(9, flag.word().getAcquire32());
            join(writer);
        }
    }

    @Test
    void theCopyingFallbackWaitsOnAWordTheGpuWrites() {
        requireHardware();
        String previous = System.setProperty(GpuWords.GDRCOPY_PROPERTY, "off");
        try (CudaContext context = CudaContext.retainPrimary(CudaDriver.open().device(0));
             DeviceMemory memory = new DeviceMemory(GdrCopy.GPU_PAGE_SIZE);
             GpuWords words = GpuWords.open(context)) {
            CudaException.check(JCudaDriver.cuMemsetD32(wordPointer(memory, 256), 0, 1), "cuMemsetD32");
            GpuWordMirror flag = words.word32(memory.aligned + 256, "flag");
            assertEquals(false, flag.isMapped());
            CudaException.check(JCudaDriver.cuMemsetD32(wordPointer(memory, 256), 5, 1), "cuMemsetD32");
            CudaException.check(JCudaDriver.cuCtxSynchronize(), "cuCtxSynchronize");
            HostMemops.await32(flag.word(), 5, WaitCondition.EQ, WAIT, new BackoffIdler(BackoffPolicy.LOW_LATENCY),
                    () -> false);
        } finally {
            if (previous == null) {
                System.clearProperty(GpuWords.GDRCOPY_PROPERTY);
            } else {
                System.setProperty(GpuWords.GDRCOPY_PROPERTY, previous);
            }
        }
    }

    private static CUdeviceptr wordPointer(DeviceMemory memory, long offset) {
        return new CUdeviceptr().withByteOffset(memory.aligned + offset);
    }

    private static void join(Thread thread) {
        try {
            thread.join(Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
