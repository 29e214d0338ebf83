package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KI model (shmem.cuh's device API on the host KI executor, over templated slots) between real PE processes:
 * ordering with put+fence+p and with put-with-signal, fetch-add atomics n·k, and a wait that times out.
 */
@Timeout(300)
class ShmemKiProcessTest {
    private static final Duration WAIT = Duration.ofSeconds(200);

    @Test
    void orderingAndAtomicsHoldBetweenProcesses() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", ShmemKiProcessMain.class.getName(), "ordering", "160")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int pe = 0; pe < 3; pe++) {
                String ok = "[" + pe + "] OK ki ordering: 160 put+fence+p and 160 putSignal of 65536 bytes from PE "
                        + (pe + 2) % 3 + ", 0 mismatches";
                assertTrue(mprun.stdout().contains(ok), "missing '" + ok + "': " + mprun.describe());
            }
        }
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", ShmemKiProcessMain.class.getName(), "atomics", "300")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            assertTrue(mprun.stdout().contains(
                    "[0] OK ki atomics: 3 PEs x 2 blocks x 300 fetch-adds gave 1800 and every old value 0..1799 once"),
                    mprun.describe());
        }
    }

    @Test
    void aWaitThatNeverCompletesEndsWithATimeoutError() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", ShmemKiProcessMain.class.getName(), "timeout")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            List<String> out = mprun.stdout();
            for (int pe = 0; pe < 2; pe++) {
                String prefix = "[" + pe + "] OK ki timeout: the wait ended with an error after ";
                assertTrue(out.stream().anyMatch(l -> l.startsWith(prefix)), "missing '" + prefix + "': " + mprun.describe());
            }
        }
    }
}
