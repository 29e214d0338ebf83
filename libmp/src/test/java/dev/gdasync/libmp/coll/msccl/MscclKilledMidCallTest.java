package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.testutil.KilledMidCall;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

/**
 * A rank killed (SIGKILL) while the others are in an MSCCL program's allreduce (blocking, on a host stream, from the
 * host KI executor) or the runtime's built-in broadcast: every form fails every survivor within
 * {@link KilledMidCall#BOUND_MS} naming the killed rank, never by its timeout (the stream form's streams and the KI
 * form's launch are aborted by a job-failure listener: docs/msccl.md). One set of three rank JVMs runs every case.
 */
@Timeout(240)
class MscclKilledMidCallTest {
    @Test
    void everyFormFailsPromptlyNamingTheKilledRank() throws InterruptedException {
        Map<String, List<KilledMidCall.Outcome>> outcomes = KilledMidCall.killVictim(MscclKilledMain.class,
                List.copyOf(MscclKilledMain.CASES.keySet()));
        KilledMidCall.assertPromptFailures(outcomes, Map.of());
    }
}
