package dev.gdasync.gdsync.cuda;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link CudaStream} end to end on a real GPU: the scenarios the fake driver runs in {@link FakeCudaStreamTest},
 * here in this JVM against the NVIDIA driver. Skipped, with the reason printed, where CUDA cannot be used.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CudaStreamGpuTest {
    @TempDir
    static Path base;
    private static String skip;
    private static CudaContext context;
    private static CudaStreamScenarios scenarios;

    @BeforeAll
    static void open() {
        Optional<String> reason = CudaDriver.unavailableReason();
        if (reason.isPresent()) {
            skip = reason.get();
            System.out.println("SKIPPED (GPU): " + skip);
            return;
        }
        context = CudaContext.retainPrimary(CudaDriver.open().device(0));
        scenarios = new CudaStreamScenarios(context, line -> System.out.println("GPU stream test: " + line));
        System.out.println("GPU stream tests on " + context.device());
    }

    @AfterAll
    static void close() {
        if (context != null) {
            context.close();
        }
    }

    private static void requireGpu() {
        assumeTrue(skip == null, skip);
    }

    @Test
    void everyMemopKindReachesHostMemoryInOrder() {
        requireGpu();
        scenarios.memops();
    }

    @Test
    void copiesBetweenHostAndDeviceMemoryRunInStreamOrder() {
        requireGpu();
        scenarios.copies();
    }

    @Test
    void nullArgumentsAreRefusedNamingTheParameter() {
        requireGpu();
        scenarios.arguments();
    }

    @Test
    void eventsOrderWorkAcrossStreams() {
        requireGpu();
        scenarios.events();
    }

    @Test
    void theSoftwareNicRunsASendRungByTheGpu() {
        requireGpu();
        scenarios.swnic(base);
    }

    @Test
    void theSoftwareMlx5DeviceRunsASendRungByTheGpuWithLibGdsyncsMlx5Memops() {
        requireGpu();
        scenarios.mlx5(base);
    }

    @Test
    void aHostTaskThatThrowsFailsTheStream() {
        requireGpu();
        scenarios.hostTaskThrows();
    }

    @Test
    void aWaitThatNeverCompletesTimesOut() {
        requireGpu();
        scenarios.timeout();
    }

    @Test
    void closeFailsPendingEvents() {
        requireGpu();
        scenarios.close();
    }
}
