package dev.gdasync.libmp.coll;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link CollectivesTest}'s matrix over the message path (what ranks on several hosts take). */
class CollectivesMessagePathTest extends CollectivesTest {
    @BeforeAll
    static void messages() {
        MessagePath.turnOff();
    }

    @AfterAll
    static void shared() {
        MessagePath.restore();
    }
}
