package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.testutil.Misuse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * shmem's misuse suite between two real PE processes ({@link ShmemMisuseMain}): every refused call with its exact
 * message, at once, with the guard blocks and the target unchanged on both PEs, and the heap usable afterwards.
 */
@Timeout(200)
class ShmemMisuseProcessTest {
    @Test
    void everyMisuseIsRefusedAtOnceWithItsMessageAndNothingChanged() {
        Misuse.runSuite(17, 2, "-np", "2", ShmemMisuseMain.class.getName());
    }
}
