package dev.gdasync.gdsync.memop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * Counts the waits host executors ran on the words of one site (the validity words of one completion queue) and
 * how long they waited, and names the site for the wait's flight-recorder event. A NIC gives one to every wait it
 * prepares ({@link Memop.Wait32#tally()}); a host executor ({@link HostMemops}) records each wait that carries one,
 * whoever runs it (a host stream, the CPU), so several threads may record at once. GPU executors and kernels do not
 * record.
 */
public final class WaitTally {
    private static final VarHandle WAITS;
    private static final VarHandle NANOS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WAITS = l.findVarHandle(WaitTally.class, "waits", long.class);
            NANOS = l.findVarHandle(WaitTally.class, "nanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Whether waits are timed: off by default, since the clock read and the second atomic add would sit on the
     * critical path of every stream wait (a ping-pong's sa round trip paid about 25 ns for them on the project's
     * guest). {@code -Dgdasync.counters.waitTime=true} or {@link #timeWaits(boolean)} switches it on.
     */
    private static volatile boolean timed = Boolean.getBoolean("gdasync.counters.waitTime");

    private final String site;
    private final long siteToken;
    private final boolean valuesCountEntries;
    @SuppressWarnings("unused")
    private volatile long waits;
    @SuppressWarnings("unused")
    private volatile long nanos;

    /**
     * @param site               what the words belong to, such as "recv CQ of QP 3"
     * @param siteToken          the site's identity across processes (a queue pair's token), or 0
     * @param valuesCountEntries whether an awaited value is the awaited entry's index plus one (the software NIC's
     *                           validity words), so that events can name the entry
     * @throws NullPointerException if the site is null
     */
    public WaitTally(String site, long siteToken, boolean valuesCountEntries) {
        this.site = Objects.requireNonNull(site, "site must not be null");
        this.siteToken = siteToken;
        this.valuesCountEntries = valuesCountEntries;
    }

    /** @return what the words belong to */
    public String site() {
        return site;
    }

    /** @return the site's identity across processes, or 0 */
    public long siteToken() {
        return siteToken;
    }

    /**
     * @param value an awaited value
     * @return the index of the entry a wait for that value awaits, or -1 when values do not count entries
     */
    public long entryOf(long value) {
        return valuesCountEntries ? value - 1 : -1;
    }

    /**
     * Records one wait.
     *
     * @param waitedNanos how long it waited: 0 when the word was ready at the first look
     */
    public void record(long waitedNanos) {
        WAITS.getAndAdd(this, 1L);
        if (waitedNanos > 0) {
            NANOS.getAndAdd(this, waitedNanos);
        }
    }

    /**
     * Switches the timing of waits on or off for the whole process; waits are counted either way.
     *
     * @param on whether waits that carry a tally measure how long they waited
     */
    public static void timeWaits(boolean on) {
        timed = on;
    }

    /** @return whether waits are timed ({@link #timeWaits(boolean)}) */
    public static boolean timesWaits() {
        return timed;
    }

    /** @return the waits recorded */
    public long waits() {
        return (long) WAITS.getOpaque(this);
    }

    /** @return the nanoseconds they waited, in all */
    public long waitedNanos() {
        return (long) NANOS.getOpaque(this);
    }

    @Override
    public String toString() {
        return "WaitTally{" + site + ", " + waits() + " waits, " + waitedNanos() + " ns}";
    }
}
