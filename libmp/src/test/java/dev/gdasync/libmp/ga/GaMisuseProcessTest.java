package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.testutil.Misuse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The misuse suite of global arrays between two real rank processes ({@link GaMisuseMain}): every refused call with
 * its exact message, at once, with the arrays around the target and the target unchanged on both ranks, and the
 * runtime usable afterwards.
 */
@Timeout(200)
class GaMisuseProcessTest {
    @Test
    void everyMisuseIsRefusedAtOnceWithItsMessageAndNothingChanged() {
        Misuse.runSuite(15, 2, "-np", "2", GaMisuseMain.class.getName());
    }
}
