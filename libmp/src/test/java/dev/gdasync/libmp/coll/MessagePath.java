package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.coll.shm.ShmChannel;

/**
 * Turns the shared-memory path off for the ranks a test class starts in this JVM (its {@code @BeforeAll}) and on
 * again after it (its {@code @AfterAll}), so that a subclass runs its parent's tests over the message path. Test
 * classes of this module run one after the other in one JVM, so the property is the class's alone while it runs.
 */
public final class MessagePath {
    private MessagePath() {
    }

    /** Makes every Collectives opened from now on take the message path. */
    public static void turnOff() {
        System.setProperty(ShmChannel.ENABLED_PROPERTY, "off");
    }

    /** Back to the default: the shared-memory path where every member maps every other's memory. */
    public static void restore() {
        System.clearProperty(ShmChannel.ENABLED_PROPERTY);
    }
}
