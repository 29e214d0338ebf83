package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The blocking host interpreter between rank processes: a peer killed while the other waits in a run fails the
 * waiting rank with a message naming it, long before the 60 s timeout.
 */
@Timeout(180)
class MscclProcessTest {
    private static final Duration WAIT = Duration.ofSeconds(90);

    @Test
    void aKilledPeerFailsTheWaitingRankNamingIt() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", "--grace", "60", MscclRankMain.class.getName(),
                "victim")) {
            String ready = mprun.awaitLine(l -> l.startsWith("[1] ready "), WAIT);
            long pid = Long.parseLong(ready.substring(ready.lastIndexOf(' ') + 1));
            mprun.awaitLine(l -> l.startsWith("[0] posted"), WAIT);
            ProcessHandle.of(pid).orElseThrow().destroyForcibly();
            String failed = mprun.awaitLine(l -> l.startsWith("[0] failed: "), WAIT);
            assertTrue(failed.contains("rank 1") && !failed.contains("did not finish"), failed);
            assertTrue(failed.contains("MSCCL program 'builtin_allpairs_allreduce"), failed);
            mprun.awaitExit(WAIT);
        }
    }
}
