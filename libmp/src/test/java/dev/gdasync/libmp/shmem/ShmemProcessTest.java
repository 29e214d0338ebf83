package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** shmem between real PE processes started by the launcher (scripts/mprun's Java side); and a PE killed mid-wait. */
@Timeout(300)
class ShmemProcessTest {
    private static final Duration WAIT = Duration.ofSeconds(200);

    @Test
    void heapOrderingAndAtomicsHoldBetweenProcesses() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", ShmemProcessMain.class.getName(), "exercise", "1000")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            List<String> out = mprun.stdout();
            assertTrue(out.stream().anyMatch(l -> l.startsWith("[0] OK heap offsets agree on 3 PEs")), mprun.describe());
            for (int pe = 0; pe < 3; pe++) {
                String ok = "[" + pe + "] OK ordering: 1000 put+fence+p and 1000 putSignal of 65536 bytes from PE "
                        + (pe + 2) % 3 + ", 0 mismatches";
                assertTrue(out.contains(ok), "missing '" + ok + "': " + mprun.describe());
            }
            assertTrue(out.contains("[0] OK atomics: 3 x 500 fetch-adds gave 1500 and every old value 0..1499 once"),
                    mprun.describe());
        }
    }

    @Test
    void aKilledPeFailsTheOthersWaitsWithAnErrorNotAHang() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", "--grace", "10", ShmemProcessMain.class.getName(),
                "victim", "1")) {
            List<Long> pids = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                int pe = r;
                String line = mprun.awaitLine(l -> l.startsWith("[" + pe + "] ready "), WAIT);
                pids.add(Long.parseLong(line.substring(line.lastIndexOf(' ') + 1)));
            }
            assertTrue(ProcessHandle.of(pids.get(1)).orElseThrow().destroyForcibly());
            assertNotEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int r : new int[] {0, 2}) {
                String prefix = "[" + r + "] wait failed clearly after ";
                assertTrue(mprun.stdout().stream().anyMatch(l -> l.startsWith(prefix) && l.contains("MpException (JOB_FAILED)")
                        && l.contains("rank 1")), "PE " + r + " must report the job failure naming rank 1: " + mprun.describe());
            }
        }
    }
}
