package dev.gdasync.gdsync.concurrent;

import java.util.Arrays;
import java.util.function.IntSupplier;

/**
 * What must keep moving while a thread waits on a memory word: a software NIC whose transport needs progress
 * calls (UCX) registers here, and host waits ({@code HostMemops}) run these between looks at their word. A
 * stream waiting for a completion then receives the message that writes it on its own thread, as a thread that
 * polls the completion queue does, with no hand-over to another thread.
 *
 * <p>Process-wide, explicit registration; an empty registry costs a waiting thread one volatile read per look.
 */
public final class WaitProgress {
    private static volatile IntSupplier[] hooks = new IntSupplier[0];

    private WaitProgress() {
    }

    /** @param hook progresses something once without blocking; returns how much it did */
    public static synchronized void add(IntSupplier hook) {
        IntSupplier[] a = Arrays.copyOf(hooks, hooks.length + 1);
        a[a.length - 1] = hook;
        hooks = a;
    }

    /** @param hook a hook given to {@link #add}; removing one that is not there does nothing */
    public static synchronized void remove(IntSupplier hook) {
        hooks = Arrays.stream(hooks).filter(h -> h != hook).toArray(IntSupplier[]::new);
    }

    /** @return how much the registered hooks did in one round */
    public static int run() {
        IntSupplier[] a = hooks;
        int n = 0;
        for (IntSupplier h : a) {
            n += h.getAsInt();
        }
        return n;
    }
}
