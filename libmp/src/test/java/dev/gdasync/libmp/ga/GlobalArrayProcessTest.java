package dev.gdasync.libmp.ga;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Global arrays between real rank processes started by the launcher; and a rank killed mid-run. */
@Timeout(300)
class GlobalArrayProcessTest {
    private static final Duration WAIT = Duration.ofSeconds(150);

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void distributionsPatchesAccumulatesAndReadIncWorkBetweenProcesses(int ranks) {
        try (ChildProcess mprun = MpRunProcess.start("-np", String.valueOf(ranks), GaExerciseMain.class.getName(),
                "exercise")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int r = 0; r < ranks; r++) {
                String ok = "[" + r + "] OK rank " + r + " of " + ranks + ": " + (10_000 / ranks) + " patches";
                assertTrue(mprun.stdout().contains(ok), "missing '" + ok + "': " + mprun.describe());
            }
        }
    }

    @Test
    void aKilledRankFailsTheOthersPendingOperationsWithAnErrorNotAHang() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", "--grace", "10", GaExerciseMain.class.getName(),
                "victim", "1")) {
            List<Long> pids = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                int rank = r;
                String line = mprun.awaitLine(l -> l.startsWith("[" + rank + "] ready "), WAIT);
                pids.add(Long.parseLong(line.substring(line.lastIndexOf(' ') + 1)));
            }
            long t0 = System.nanoTime();
            assertTrue(ProcessHandle.of(pids.get(1)).orElseThrow().destroyForcibly());
            int status = mprun.awaitExit(WAIT);
            long seconds = (System.nanoTime() - t0) / 1_000_000_000L;
            assertNotEquals(0, status, mprun.describe());
            for (int r : new int[] {0, 2}) {
                String prefix = "[" + r + "] failed clearly after ";
                assertTrue(mprun.stdout().stream().anyMatch(l -> l.startsWith(prefix) && l.contains("MpException")
                        && l.contains("rank 1")), "rank " + r + " must report an MpException naming rank 1: " + mprun.describe());
            }
            assertTrue(seconds < 20, "the survivors failed well before any timeout: " + seconds + " s");
        }
    }
}
