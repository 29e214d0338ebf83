package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.testutil.KilledMidCall;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

/**
 * A PE killed (SIGKILL) while the others are blocked in each blocking call of shmem: barrierAll, syncAll, waitUntil,
 * waitUntilAll, signalWaitUntil, malloc, free, barrierAllOnStream and signalWaitUntilOnStream waited through the
 * stream, and a waitUntil inside a kernel of the host KI executor (the job-failure listener of the prepared launch
 * aborts it through its KI table): every survivor's call fails within {@link KilledMidCall#BOUND_MS} naming the
 * killed PE, never by a timeout (docs/shmem.md). One set of three PE JVMs runs every case, each case a job of its
 * own.
 */
@Timeout(240)
class ShmemKilledMidCallTest {
    @Test
    void everyBlockingCallFailsPromptlyNamingTheKilledPe() throws InterruptedException {
        Map<String, List<KilledMidCall.Outcome>> outcomes = KilledMidCall.killVictim(ShmemKilledMain.class,
                List.copyOf(ShmemKilledMain.CASES.keySet()));
        KilledMidCall.assertPromptFailures(outcomes, Map.of());
    }
}
