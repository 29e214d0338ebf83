package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The SA model on CUDA streams: {@link ShmemOnStreamTest}'s ring of puts with signal (payload checked by a stream
 * task, acknowledged by ADD signals) and its on-stream barriers, with each PE's work queued on a CUDA stream of the
 * GPU's primary context (2 PEs, threads of this JVM, one GPU). Skipped, with the reason printed, without a GPU; the
 * name puts it in the GPU bundle.
 */
@Timeout(300)
class ShmemOnStreamGpuTest {
    @TempDir
    Path base;

    @Test
    void putSignalAndBarriersOnCudaStreams() throws Exception {
        Optional<String> reason = CudaDriver.unavailableReason();
        if (reason.isPresent()) {
            System.out.println("SKIPPED (GPU): shmem on CUDA streams: " + reason.get());
        }
        assumeTrue(reason.isEmpty(), reason.orElse(""));
        try (CudaContext context = CudaContext.retainPrimary(CudaDriver.open().device(0))) {
            ShmemRanks.run(2, base, 1 << 20, shmem -> {
                try (CudaStream stream = CudaStream.create("shmem-cuda-" + shmem.myPe(), context)) {
                    ShmemOnStreamTest.ringOfSignals(shmem, stream, 200);
                    ShmemOnStreamTest.barriers(shmem, stream, 20);
                }
                shmem.barrierAll();
            });
        }
    }
}
