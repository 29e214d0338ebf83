package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.testutil.KilledMidCall;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

/**
 * A rank killed (SIGKILL) while the others are blocked in a collective call of global arrays (sync, create by
 * duplicate, zero, fill, destroy): every survivor's call fails within {@link KilledMidCall#BOUND_MS} naming the
 * killed rank. One set of three rank JVMs runs every case.
 */
@Timeout(240)
class GaKilledMidCallTest {
    @Test
    void everyCollectiveCallFailsPromptlyNamingTheKilledRank() throws InterruptedException {
        Map<String, List<KilledMidCall.Outcome>> outcomes = KilledMidCall.killVictim(GaKilledMain.class,
                List.copyOf(GaKilledMain.CASES.keySet()));
        KilledMidCall.assertPromptFailures(outcomes, Map.of());
    }
}
