package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;

import java.util.Objects;

/**
 * The collectives of one {@link Mp}: its host progress engine and the communicators over its ranks. Collective
 * traffic is progressed by the calling thread inside {@link Communicator#test} and {@link Communicator#wait} (the
 * MPI model), so a rank that never calls them makes no progress on its collectives.
 *
 * <p>While a collective that involves two ranks is active on either of them, those two ranks must not exchange
 * Mp point-to-point messages: Mp matches per peer in FIFO order, and the engine's receives would take them.
 * Driven by the thread that drives the Mp.
 */
public final class Collectives implements AutoCloseable {
    private final CollEngine engine;
    private final Communicator world;
    /** The smallest context id no communicator of this rank uses; split agrees on it over the parent. */
    private int nextContext = 1;
    private boolean closed;

    private Collectives(Mp mp) {
        this.engine = new CollEngine(mp);
        int[] all = new int[mp.size()];
        for (int r = 0; r < all.length; r++) {
            all[r] = r;
        }
        this.world = new Communicator(this, 0, all);
    }

    /**
     * Starts the collectives of an Mp; local, no message is exchanged.
     *
     * @param mp the job's endpoint, driven by this thread
     * @return the collectives, to close before the Mp
     */
    public static Collectives open(Mp mp) {
        Objects.requireNonNull(mp, "mp must not be null");
        return new Collectives(mp);
    }

    /** @return the communicator of every rank of the Mp, context 0 */
    public Communicator world() {
        requireOpen();
        return world;
    }

    /** @return the Mp under these collectives */
    public Mp mp() {
        return engine.mp();
    }

    /** @return how many collectives are posted and not yet finished on this rank */
    public int active() {
        return engine.activeCount();
    }

    /** Makes every active collective progress without waiting (what {@link Communicator#test} also does). */
    public void progress() {
        requireOpen();
        engine.progress();
    }

    CollEngine engine() {
        requireOpen();
        return engine;
    }

    int nextContext() {
        return nextContext;
    }

    void contextsUsedBelow(int end) {
        nextContext = Math.max(nextContext, end);
    }

    void requireOpen() {
        if (closed) {
            throw new IllegalStateException("these Collectives are closed");
        }
    }

    /** Frees the engine's memory; collectives still active are abandoned (their requests fail). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            engine.close();
        }
    }
}
