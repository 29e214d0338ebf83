package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.kernels.KiDevice;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import org.agrona.concurrent.IdleStrategy;

/**
 * What a host block thread carries into a kernel: how it idles in waits and what it does after a ring. With an
 * after-ring hook (the NIC's {@code progressStoreRings}) the thread also runs it between looks while it waits, so on a
 * small machine the waiting thread progresses the NIC (a device whose engine writes the CQE it waits on) instead of
 * waiting for the NIC's agent to be scheduled.
 */
final class BlockContext {
    final IdleStrategy idler;
    private final Runnable afterRing;

    BlockContext(BackoffIdler idler, Runnable afterRing) {
        this.idler = afterRing == null ? idler : new ProgressingIdler(idler, afterRing);
        this.afterRing = afterRing;
    }

    /** @return what runs after each ring and between looks while waiting, or null */
    Runnable afterRing() {
        return afterRing;
    }

    /** Runs the hook, then idles as the policy says. */
    private static final class ProgressingIdler implements IdleStrategy {
        private final BackoffIdler idler;
        private final Runnable progress;

        ProgressingIdler(BackoffIdler idler, Runnable progress) {
            this.idler = idler;
            this.progress = progress;
        }

        @Override
        public void idle(int workCount) {
            if (workCount <= 0) {
                idle();
            } else {
                idler.reset();
            }
        }

        @Override
        public void idle() {
            progress.run();
            idler.idle();
        }

        @Override
        public void reset() {
            idler.reset();
        }
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
