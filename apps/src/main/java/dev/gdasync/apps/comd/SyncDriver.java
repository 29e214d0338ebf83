package dev.gdasync.apps.comd;

import java.util.List;

/**
 * A driver whose work runs at once on the calling thread (the MPI, host and KI models: in KI the calling thread
 * launches each exchange kernel and joins it). Axes that stay on this rank are exchanged locally.
 */
abstract class SyncDriver implements StepDriver {
    private final Timers timers = new Timers();
    private final LocalExchange local;

    SyncDriver(List<Halo> halos) {
        this.local = LocalExchange.forHalos(halos);
    }

    @Override
    public final void run(Phase phase, Runnable task) {
        long t0 = System.nanoTime();
        task.run();
        timers.add(phase, System.nanoTime() - t0);
    }

    @Override
    public final void exchange(Halo halo, int axis) {
        long t0 = System.nanoTime();
        if (!exchangeRemote(halo, axis)) {
            local.exchange(halo, axis);
        }
        timers.add(Phase.EXCHANGE, System.nanoTime() - t0);
    }

    /** @return false when the axis stays on this rank (then the caller exchanges locally) */
    abstract boolean exchangeRemote(Halo halo, int axis);

    @Override
    public void sync() {
        // everything ran already
    }

    @Override
    public final Timers timers() {
        return timers;
    }
}
