package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.testutil.KilledMidCall;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

/**
 * A rank killed (SIGKILL) while the others are in an MSCCL program's allreduce (blocking, on a host stream, from the
 * host KI executor) or the runtime's built-in broadcast. The blocking program and the built-in fail every survivor
 * within {@link KilledMidCall#BOUND_MS} naming the killed rank; the stream and KI forms wait on words in memory and
 * end by their timeout ({@link KilledMidCall#SHORT_TIMEOUT} here), naming what they waited for, never hanging
 * (docs/msccl.md). One set of three rank JVMs runs every case.
 */
@Timeout(240)
class MscclKilledMidCallTest {
    @Test
    void everyFormFailsPromptlyNamingTheKilledRank() throws InterruptedException {
        Map<String, List<KilledMidCall.Outcome>> outcomes = KilledMidCall.killVictim(MscclKilledMain.class,
                List.copyOf(MscclKilledMain.CASES.keySet()));
        Map<String, List<KilledMidCall.Outcome>> prompt = new java.util.LinkedHashMap<>(outcomes);
        prompt.keySet().removeAll(MscclKilledMain.BY_TIMEOUT);
        KilledMidCall.assertPromptFailures(prompt, Map.of());
        KilledMidCall.assertTimeoutFailures(KilledMidCall.only(outcomes, MscclKilledMain.BY_TIMEOUT), "tb ");
    }
}
