package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * libmp end to end between real processes started by the launcher: every Mp and Comm call with payloads
 * checked, on 2 and 4 ranks; and a rank killed mid-run.
 */
@Timeout(180)
class MpOverLauncherTest {

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void everyCallWorksBetweenProcesses(int ranks) {
        try (ChildProcess mprun = MpRunProcess.start("-np", String.valueOf(ranks), "mpexercise", "exercise")) {
            assertEquals(0, mprun.awaitExit(MpRunTest.WAIT.multipliedBy(2)), mprun.describe());
            for (int r = 0; r < ranks; r++) {
                String ok = "[" + r + "] OK rank " + r + " of " + ranks;
                assertTrue(mprun.stdout().contains(ok), "missing '" + ok + "': " + mprun.describe());
            }
            // More ranks than CPUs (-np 4 on this 2-CPU machine): every rank's waits yield instead of spinning.
            int cpus = Runtime.getRuntime().availableProcessors();
            if (ranks > cpus) {
                for (int r = 0; r < ranks; r++) {
                    String prefix = "[" + r + "] cpu share: ";
                    String line = mprun.stdout().stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
                    assertTrue(line != null && line.contains(": oversubscribed, waits yield") && line.endsWith("; waits yield"),
                            "rank " + r + " of " + ranks + " on " + cpus + " CPUs yields: " + line + "\n" + mprun.describe());
                }
            } else {
                System.out.println("MpOverLauncherTest: not checking the oversubscribed decision: " + ranks + " ranks on "
                        + cpus + " CPUs");
            }
        }
    }

    @Test
    void aKiWaitThatNeverCompletesEndsTheKernelAndNamesItsDescriptor() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", "mpexercise", "kitimeout")) {
            assertEquals(0, mprun.awaitExit(MpRunTest.WAIT), mprun.describe());
            String prefix = "[0] KI FAILED after ";
            String line = mprun.stdout().stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
            assertTrue(line != null, "rank 0 reports the kernel's failure: " + mprun.describe());
            assertTrue(line.contains(" ms: exchange on host timed out waiting on wait entry 0 (CQE #0 of recv CQ of QP "), line);
            long ms = Long.parseLong(line.substring(prefix.length(), line.indexOf(" ms:")));
            assertTrue(ms >= 300 && ms < 20_000, "failed after its 300 ms timeout, not before nor much later: " + ms);
        }
    }

    @Test
    void aRankKilledMidRunFailsTheOthersRequestsClearlyAndTheLauncherExitsNonZero() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", "--grace", "10", "mpexercise", "victim", "1")) {
            List<Long> pids = MpRunTest.readyPids(mprun, 0, 1, 2);
            long t0 = System.nanoTime();
            assertTrue(ProcessHandle.of(pids.get(1)).orElseThrow().destroyForcibly());
            int status = mprun.awaitExit(MpRunTest.WAIT);
            long seconds = (System.nanoTime() - t0) / 1_000_000_000L;
            assertTrue(status != 0, "the launcher must fail: " + mprun.describe());
            for (int r : new int[] {0, 2}) {
                String prefix = "[" + r + "] failed clearly after ";
                assertTrue(mprun.stdout().stream().anyMatch(l -> l.startsWith(prefix) && l.contains("receive from rank 1")
                        && l.contains("process is gone")), "rank " + r + " must name the dead peer: " + mprun.describe());
            }
            assertTrue(seconds < 10, "the survivors failed within the grace period, well under the timeout: " + seconds + " s");
            MpRunTest.assertAllGone(pids, mprun.describe());
        }
    }
}
