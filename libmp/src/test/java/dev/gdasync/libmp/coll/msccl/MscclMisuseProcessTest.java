package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.testutil.Misuse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The MSCCL runtime's misuse suite between two real rank processes ({@link MscclMisuseMain}): programs, counts,
 * roots or kinds that differ between the ranks fail both at once with their exact messages, with the guards and
 * buffers unchanged, and the built-in collectives still work.
 */
@Timeout(200)
class MscclMisuseProcessTest {
    @Test
    void everyDisagreementIsRefusedAtOnceWithItsMessage() {
        Misuse.runSuite(5, 2, "-np", "2", MscclMisuseMain.class.getName());
    }
}
