package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.testutil.KilledMidCall;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

/**
 * A rank killed (SIGKILL) while the others are blocked in each blocking collective of the host engine (barrier,
 * bcast, ibcast + wait, allgather, alltoall, alltoallv, allreduce, reduce, reduce-scatter, the typed broadcast,
 * allgather and alltoall, sendrecv, a group): every survivor's call
 * fails within {@link KilledMidCall#BOUND_MS} naming the killed rank, never by a timeout. One set of three rank JVMs
 * runs every case, each case a job of its own.
 */
@Timeout(240)
class CollKilledMidCallTest {
    @Test
    void everyBlockingCollectiveFailsPromptlyNamingTheKilledRank() throws InterruptedException {
        Map<String, List<KilledMidCall.Outcome>> outcomes = KilledMidCall.killVictim(CollKilledMain.class,
                List.copyOf(CollKilledMain.CASES.keySet()));
        KilledMidCall.assertPromptFailures(outcomes, Map.of());
    }
}
