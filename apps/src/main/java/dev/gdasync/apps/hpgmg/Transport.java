package dev.gdasync.apps.hpgmg;

/**
 * A communication model: how a {@link CommPlan} runs (post receives, pack, send, local work, wait,
 * unpack) and where compute runs (on the CPU now, or queued on a stream). One instance per rank and mode.
 */
interface Transport extends AutoCloseable {
    /** A block kernel bound to its vectors and levels. */
    interface Kernel {
        void apply(Block b);
    }

    /** @return the mode's name ({@code mpj}, {@code host}, {@code sa}, {@code ki}) */
    String mode();

    /** @return this rank */
    int rank();

    /** @return the ranks of the job */
    int size();

    /** Runs compute on this rank's boxes: now, or queued behind earlier work (sa). */
    void compute(Runnable work);

    /** Runs an exchange, a restriction or an interpolation in this model. */
    void run(CommPlan plan, Kernel pack, Kernel local, Kernel unpack);

    /** Runs a plan on the CPU after every queued operation ended (reductions). */
    void runNow(CommPlan plan, Kernel pack, Kernel local, Kernel unpack);

    /** Waits until queued work ended and every request of this rank is reaped. */
    void sync();

    /** Meets every rank. */
    void barrier();

    @Override
    void close();

    /** Runs the local blocks of a plan that needs no message. */
    static void runLocal(CommPlan plan, Kernel local) {
        for (Block b : plan.local) {
            local.apply(b);
        }
    }
}
