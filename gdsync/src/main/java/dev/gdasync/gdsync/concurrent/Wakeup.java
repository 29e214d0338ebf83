package dev.gdasync.gdsync.concurrent;

import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Lets the threads that post work to an agent wake it when, and only when, it parks.
 *
 * <p>The agent's idler parks through {@link #park(long)}: it announces the park, checks once more whether
 * work is ready, then parks. A poster publishes its work, then calls {@link #wake()}, which unparks the
 * agent only if a park is announced. Both sides write, then read, volatile fields, so at least one of them
 * sees the other: either the agent finds the work in its last check, or the poster finds the announcement
 * and unparks. A poster therefore never pays for an unpark while the agent spins or yields, and never
 * leaves work waiting for the park time to run out.
 */
public final class Wakeup implements Parker {
    private final BooleanSupplier ready;
    private volatile Thread parked;

    /**
     * Creates a wake-up for one agent thread.
     *
     * @param ready whether the agent has something to do (work posted, or a request to stop); read by the
     *              agent's thread just before it parks
     */
    public Wakeup(BooleanSupplier ready) {
        this.ready = Objects.requireNonNull(ready, "ready");
    }

    /** Unparks the agent if it is parked or about to park. Call it after publishing the work. */
    public void wake() {
        Thread t = parked;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /**
     * Parks the calling (agent) thread for at most the given time, unless work is ready.
     *
     * @param nanos the longest park
     */
    @Override
    public void park(long nanos) {
        parked = Thread.currentThread();
        if (!ready.getAsBoolean()) {
            LockSupport.parkNanos(this, nanos);
        }
        parked = null;
    }
}
