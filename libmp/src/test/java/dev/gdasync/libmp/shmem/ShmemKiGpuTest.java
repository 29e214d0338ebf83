package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.ki.kernels.KiKernels;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The shmem CUDA kernels ({@code gds_shmem_ordering}, {@code gds_shmem_fetch_add}, {@code gds_shmem_ops}) between two
 * real PE processes sharing one GPU, launched by the CUDA KI executor over {@code Shmem.kiPrepare}'s templated slots:
 * zero payload mismatches with put+fence+p and with put-with-signal; 2 PEs × 2 blocks × k fetch-adds give 4k with
 * every old value once; p from a kernel lands in order. Skipped, with the reason printed, where there is no usable GPU
 * or the build has no kernels. {@code ShmemKiProcessTest} runs the same device API on the host KI executor.
 */
@Timeout(600)
class ShmemKiGpuTest {
    private static final Duration WAIT = Duration.ofSeconds(300);
    private static String skip;

    @BeforeAll
    static void probe() {
        Optional<String> reason = KiKernels.available() ? CudaDriver.unavailableReason()
                : Optional.of("this build has no CUDA kernels: ki-kernels was built without nvcc");
        skip = reason.orElse(null);
        if (skip != null) {
            System.out.println("SKIPPED (GPU): shmem kernels: " + skip);
        }
    }

    private static ChildProcess pes(String... args) {
        assumeTrue(skip == null, skip);
        String[] all = new String[args.length + 3];
        all[0] = "-np";
        all[1] = "2";
        all[2] = ShmemKiGpuProcessMain.class.getName();
        System.arraycopy(args, 0, all, 3, args.length);
        return MpRunProcess.start(all);
    }

    @Test
    void putsFencesAndSignalsFromAKernelArriveInOrder() {
        try (ChildProcess mprun = pes("ordering", "80")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            assertTrue(mprun.stdout().contains("[1] OK gpu ordering: 2 blocks x 80 put+fence+p and 80 putSignal of 4096 "
                    + "bytes from PE 0 in 4 launches, 0 mismatches"), mprun.describe());
        }
    }

    @Test
    void fetchAddsFromKernelsOnTwoPesGiveEveryOldValueOnce() {
        try (ChildProcess mprun = pes("atomics", "500")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            assertTrue(mprun.stdout().contains("[0] OK gpu atomics: 2 PEs x 2 blocks x 500 fetch-adds gave 2000 and every "
                    + "old value 0..1999 once"), mprun.describe());
        }
    }

    @Test
    void pFromAKernelLandsInOrder() {
        try (ChildProcess mprun = pes("ops", "100")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int pe = 0; pe < 2; pe++) {
                assertTrue(mprun.stdout().contains("[" + pe + "] OK gpu ops: 100 p from PE " + (1 - pe) + " ended at 99"),
                        mprun.describe());
            }
        }
    }
}
