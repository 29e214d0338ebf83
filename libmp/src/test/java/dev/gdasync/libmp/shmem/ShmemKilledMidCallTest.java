package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.testutil.KilledMidCall;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

/**
 * A PE killed (SIGKILL) while the others are blocked in each blocking call of shmem: barrierAll, syncAll, waitUntil,
 * waitUntilAll, signalWaitUntil, malloc, free, barrierAllOnStream and signalWaitUntilOnStream waited through the
 * stream: every survivor's call fails within {@link KilledMidCall#BOUND_MS} naming the killed PE, never by a
 * timeout. A waitUntil inside a kernel of the host KI executor looks at nothing but the word, so it ends by its
 * timeout ({@link KilledMidCall#SHORT_TIMEOUT} here) and the launch's completion names the job's failure
 * (docs/shmem.md). One set of three PE JVMs runs every case, each case a job of its own.
 */
@Timeout(240)
class ShmemKilledMidCallTest {
    @Test
    void everyBlockingCallFailsPromptlyNamingTheKilledPe() throws InterruptedException {
        Map<String, List<KilledMidCall.Outcome>> outcomes = KilledMidCall.killVictim(ShmemKilledMain.class,
                List.copyOf(ShmemKilledMain.CASES.keySet()));
        Map<String, List<KilledMidCall.Outcome>> prompt = new java.util.LinkedHashMap<>(outcomes);
        prompt.keySet().removeAll(ShmemKilledMain.BY_TIMEOUT);
        KilledMidCall.assertPromptFailures(prompt, Map.of());
        KilledMidCall.assertTimeoutFailures(KilledMidCall.only(outcomes, ShmemKilledMain.BY_TIMEOUT), "rank 1");
    }
}
