package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import dev.gdasync.libmp.testutil.CollRankMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static dev.gdasync.libmp.launch.MpRunTest.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The host engine's shared-memory path between real rank processes under {@code mprun}: every collective exact on
 * each side of every switch point on 2 to 5 ranks, and a rank killed under a pending collective failing the others
 * with its name (the bootstrap's news of the dead process, or the link to it, ends their waits).
 */
@Timeout(180)
class SharedMemoryProcessesTest {
    private static final String COLL_RANK = CollRankMain.class.getName();

    @ParameterizedTest(name = "{0} rank processes")
    @ValueSource(ints = {2, 3, 4, 5})
    void everyCollectiveIsExactOnEachSideOfEverySwitch(int n) {
        try (ChildProcess mprun = MpRunProcess.start("-np", Integer.toString(n), COLL_RANK, "switches")) {
            assertEquals(0, mprun.awaitExit(WAIT.multipliedBy(2)), mprun.describe());
            for (int r = 0; r < n; r++) {
                assertTrue(mprun.stdout().contains("[" + r + "] shared true"), mprun.describe());
                assertTrue(mprun.stdout().contains("[" + r + "] switches ok"), mprun.describe());
            }
        }
    }

    @Test
    void aKilledRankFailsThePendingCollectiveOfTheOthersNamingIt() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", "--grace", "30", COLL_RANK, "victim", "1")) {
            List<Long> victim = MpRunTest.readyPids(mprun, 1);
            mprun.awaitLine(l -> l.startsWith("[0] posted "), WAIT);
            mprun.awaitLine(l -> l.startsWith("[2] posted "), WAIT);
            ProcessHandle.of(victim.getFirst()).orElseThrow().destroyForcibly();
            for (int r : new int[] {0, 2}) {
                String line = mprun.awaitLine(l -> l.startsWith("[" + r + "] failed: "), WAIT);
                assertTrue(line.contains("alltoall of 100000 bytes per rank (#0 on communicator 0, rank " + r + " of 3)")
                        && line.contains("cannot finish") && line.contains("rank 1"), line);
            }
            assertNotEquals(0, mprun.awaitExit(WAIT), mprun.describe());
        }
    }
}
