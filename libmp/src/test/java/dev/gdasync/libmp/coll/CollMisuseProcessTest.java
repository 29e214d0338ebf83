package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.testutil.Misuse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The collectives' misuse suite between two real rank processes on one host ({@link CollMisuseMain}): collectives
 * whose roots, sizes, types, operators or kinds differ fail both ranks at once with their exact messages, write
 * nothing (the receive buffer and guards are unchanged) and leave the communicator usable; on the host engine and on
 * the offload engine with the job's collective proxy.
 */
@Timeout(300)
class CollMisuseProcessTest {
    @Test
    void theHostEngineRefusesEveryDisagreementAtOnce() {
        Misuse.runSuite(11, 2, "-np", "2", CollMisuseMain.class.getName(), "host");
    }

    @Test
    void theOffloadEngineRefusesEveryDisagreementAtOnce() {
        Misuse.runSuite(11, 2, "-np", "2", "--proxies", CollMisuseMain.class.getName(), "offload");
    }
}
