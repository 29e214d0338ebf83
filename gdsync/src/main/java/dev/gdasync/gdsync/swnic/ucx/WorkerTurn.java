package dev.gdasync.gdsync.swnic.ucx;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Who may call a single-threaded UCP worker now: a try-lock that knows its holder and is not reentrant (UCX must
 * not be progressed from within its own handlers). Threads that poll take it on every empty poll, so taking and
 * leaving it is one compare-and-set and one release store, without the queueing of a general lock: a thread that
 * does not get it never waits for it, except {@link #lock()} when the worker closes.
 */
final class WorkerTurn {
    private static final VarHandle HOLDER;

    static {
        try {
            HOLDER = MethodHandles.lookup().findVarHandle(WorkerTurn.class, "holder", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through HOLDER
    private volatile Thread holder;

    /** @return whether the calling thread took the turn (false if any thread, itself included, holds it) */
    boolean tryLock() {
        return HOLDER.compareAndSet(this, (Thread) null, Thread.currentThread());
    }

    /** Takes the turn, waiting for its holder to leave it. */
    void lock() {
        while (!tryLock()) {
            Thread.yield();
        }
    }

    /** Leaves the turn; only its holder calls it. */
    void unlock() {
        HOLDER.setRelease(this, (Thread) null);
    }

    /** @return whether the calling thread holds the turn */
    boolean isHeldByCurrentThread() {
        return (Thread) HOLDER.getOpaque(this) == Thread.currentThread();
    }
}
