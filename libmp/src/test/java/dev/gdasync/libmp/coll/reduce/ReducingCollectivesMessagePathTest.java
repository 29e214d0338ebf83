package dev.gdasync.libmp.coll.reduce;

import dev.gdasync.libmp.coll.MessagePath;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link ReducingCollectivesTest} over the message path: recursive doubling and the ring. */
class ReducingCollectivesMessagePathTest extends ReducingCollectivesTest {
    @BeforeAll
    static void messages() {
        MessagePath.turnOff();
    }

    @AfterAll
    static void shared() {
        MessagePath.restore();
    }
}
