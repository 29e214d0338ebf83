package dev.gdasync.apps.comd;

/**
 * Runs the work of CoMD's time steps in one communication model. The simulation hands it every piece of work in
 * order; a synchronous driver runs each at once on the calling thread, the stream driver queues it on a host stream.
 * Work handed over is complete, and its effects visible to the caller, after {@link #sync()}.
 */
interface StepDriver extends AutoCloseable {

    /** Starts a round of exchanges (a redistribution and, for EAM, a force computation): receives go up a round ahead. */
    void beginRound();

    /** Runs (or queues) a piece of computation, timed as {@code phase}. */
    void run(Phase phase, Runnable task);

    /** Runs (or queues) the exchange of {@code halo} along {@code axis} (0 x, 1 y, 2 z) with both neighbors. */
    void exchange(Halo halo, int axis);

    /** Returns once everything handed over has run. */
    void sync();

    /** @return the time spent per phase */
    Timers timers();

    /** Releases buffers, streams and threads. */
    @Override
    void close();
}
