package dev.gdasync.ki;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.ki.KiTable;

/** What a host block thread carries into a kernel: how it idles in waits and what it does after a ring. */
final class BlockContext {
    final BackoffIdler idler;
    private final Runnable afterRing;

    BlockContext(BackoffIdler idler, Runnable afterRing) {
        this.idler = idler;
        this.afterRing = afterRing;
    }

    /** Rings a send entry by plain stores, then runs the after-ring hook, if any. */
    void send(KiTable.SendEntry e) {
        KiDevice.send(e);
        if (afterRing != null) {
            afterRing.run();
        }
    }

    /** Patches and rings a template entry, then runs the after-ring hook, if any. */
    void sendTemplate(KiTable.TemplateEntry t, KiTemplateArgs a) {
        KiDevice.sendTemplate(t, a);
        if (afterRing != null) {
            afterRing.run();
        }
    }
}
