package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.bootstrap.EnvNames;
import dev.gdasync.libmp.coll.shm.ShmChannel;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The collectives of one {@link Mp}: its progress engine and the communicators over its ranks. With the host
 * engine ({@link #host}) collective traffic is progressed by the calling thread inside {@link Communicator#test}
 * and {@link Communicator#wait} (the MPI model), so a rank that never calls them makes no progress on its
 * collectives. With the offload engine ({@link #offload}) each collective is one task for the host's collective
 * proxy (started by {@code scripts/mprun --proxies}), which moves the bytes while the rank computes; test and wait
 * only look at the task's completion. The API is the same for both.
 *
 * <p>While a collective that involves two ranks is active on either of them, those two ranks must not exchange
 * Mp point-to-point messages: Mp matches per peer in FIFO order, and the engine's receives would take them.
 * Driven by the thread that drives the Mp.
 */
public final class Collectives implements AutoCloseable {
    /** Set to {@code offload} (mprun --proxies does) to make {@link #open} choose the offload engine. */
    public static final String ENGINE_ENV = EnvNames.COLL_ENGINE;

    private final Engine engine;
    private final Communicator world;
    /** The smallest context id no communicator of this rank uses; split agrees on it over the parent. */
    private int nextContext = 1;
    /** The shared-memory channels of this rank's communicators. */
    private final List<ShmChannel> channels = new ArrayList<>();
    /** What closes with these collectives (the communicators' message-path scratch). */
    private final List<AutoCloseable> owned = new ArrayList<>();
    private boolean closed;

    private Collectives(Mp mp, Engine engine) {
        this.engine = engine;
        int[] all = new int[mp.size()];
        for (int r = 0; r < all.length; r++) {
            all[r] = r;
        }
        this.world = new Communicator(this, 0, all);
    }

    /**
     * Starts the collectives of an Mp with the engine the job chose: the offload engine when the environment
     * variable {@value #ENGINE_ENV} is {@code offload} (as under {@code scripts/mprun --proxies}), else the host
     * engine; local, no message is exchanged.
     *
     * @param mp the job's endpoint, driven by this thread
     * @return the collectives, to close before the Mp
     */
    public static Collectives open(Mp mp) {
        Objects.requireNonNull(mp, "mp must not be null");
        return "offload".equals(System.getenv(ENGINE_ENV)) ? offload(mp) : host(mp);
    }

    /**
     * Starts the collectives of an Mp on the host engine (progressed by test and wait). Collective over the Mp's
     * ranks (every rank calls it, as MPI's communicator creation): the ranks set up the world communicator's
     * shared-memory path together, when every rank can map every other's memory (one host, the software NIC over
     * shared memory; {@code docs/collectives.md}).
     *
     * @param mp the job's endpoint, driven by this thread
     * @return the collectives, to close before the Mp
     * @throws IllegalStateException also if another layer holds the Mp's two-sided calls ({@link Mp#reserveTwoSided})
     */
    public static Collectives host(Mp mp) {
        Objects.requireNonNull(mp, "mp must not be null");
        requireTwoSided(mp, "Collectives.host");
        return withChannel(new Collectives(mp, new CollEngine(mp)));
    }

    /**
     * Starts the collectives of an Mp on the offload engine, with the proxy the launcher started for this host
     * (its locator file is named by {@value EnvNames#COLL_PROXY}). Collective over the Mp's ranks, as
     * {@link #host} is: ranks on one host set up the world communicator's shared-memory path, which the proxy then
     * helps with.
     *
     * @param mp the job's endpoint, driven by this thread
     * @return the collectives, to close before the Mp
     * @throws IllegalStateException if the job has no proxy, or the proxy cannot serve this rank
     */
    public static Collectives offload(Mp mp) {
        Objects.requireNonNull(mp, "mp must not be null");
        String locator = System.getenv(EnvNames.COLL_PROXY);
        if (locator == null || locator.isBlank()) {
            throw new IllegalStateException("offloaded collectives need a collective proxy, and this job has none: "
                    + EnvNames.COLL_PROXY + " is not set (start the job with scripts/mprun --proxies)");
        }
        return offload(mp, Path.of(locator));
    }

    /**
     * Starts the collectives of an Mp on the offload engine, with the proxy whose locator file is given (a
     * the collective proxy of this host, {@code dev.gdasync.libmp.proxy.CollProxy}, wrote it); collective over the Mp's ranks.
     *
     * @param mp      the job's endpoint, driven by this thread
     * @param locator the proxy's locator file
     * @return the collectives, to close before the Mp
     * @throws IllegalStateException if no proxy publishes that locator within the Mp's wait timeout, the proxy
     *                               cannot serve this rank, or another layer holds the Mp's two-sided calls
     *                               ({@link Mp#reserveTwoSided})
     */
    public static Collectives offload(Mp mp, Path locator) {
        Objects.requireNonNull(mp, "mp must not be null");
        Objects.requireNonNull(locator, "locator must not be null");
        requireTwoSided(mp, "Collectives.offload");
        return withChannel(new Collectives(mp, new OffloadEngine(mp, locator)));
    }

    /**
     * Refuses an Mp whose two-sided calls another layer holds ({@link Mp#reserveTwoSided}): a communicator agrees on
     * its paths, and runs its message path, with the Mp's sends and receives.
     */
    static void requireTwoSided(Mp mp, String call) {
        String holder = mp.twoSidedHolder();
        if (holder != null) {
            throw new IllegalStateException(call + " on rank " + mp.rank() + ": the collectives need this Mp's two-sided"
                    + " calls, and " + holder + " holds them: use that layer's collectives on this Mp");
        }
    }

    /** Sets up the world communicator's shared-memory path with the other ranks; closes the collectives if it fails. */
    private static Collectives withChannel(Collectives c) {
        try {
            c.world.openChannel();
            if (!c.world.sharedMemory() && c.world.size() > 1) {
                // The message path: every rank posts its calls where a stalled peer can read them.
                c.engine.openBoard();
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** @return whether a proxy executes these collectives (the offload engine) */
    public boolean offloaded() {
        requireOpen();
        return engine.offloaded();
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
        int n = engine.activeCount();
        for (ShmChannel c : channels) {
            n += c.active();
        }
        return n;
    }

    /** Makes every active collective progress without waiting (what {@link Communicator#test} also does). */
    public void progress() {
        requireOpen();
        engine.progress();
        for (ShmChannel c : channels) {
            c.progress();
        }
    }

    /** A communicator's shared-memory channel: progressed by {@link #progress}, closed by {@link #close}. */
    void channelOpened(ShmChannel channel) {
        channels.add(channel);
    }

    /** Closes something of a communicator with these collectives. */
    void closeWith(AutoCloseable c) {
        owned.add(c);
    }

    Engine engine() {
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
            RuntimeException first = null;
            for (ShmChannel c : channels) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
            for (AutoCloseable c : owned) {
                try {
                    c.close();
                } catch (Exception e) {
                    first = first == null ? new IllegalStateException(e) : first;
                }
            }
            engine.close();
            if (first != null) {
                throw first;
            }
        }
    }
}
