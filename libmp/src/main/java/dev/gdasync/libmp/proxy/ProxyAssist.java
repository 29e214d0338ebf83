package dev.gdasync.libmp.proxy;

import dev.gdasync.libmp.coll.offload.ProxyQueue;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.libmp.coll.shm.ShmAssistant;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The proxy's help on the shared-memory path: the ranks of a communicator that lives on this host register their
 * channel areas in the queue ({@link ProxyQueue#registerChannel}); once every member did, the proxy maps the areas
 * through its queue pairs to the ranks and its helper threads fill the members' receive buffers while they compute
 * ({@link ShmAssistant}: the copying collectives, after a short grace in which a rank that is already waiting does
 * its own). The threads are the DPU's cores of this model: {@value #HELPERS_PROPERTY} of them (2 by default), each
 * looking at every channel; they yield the CPU when there is nothing to fill, and once the host was idle a while
 * they sleep on the queue's bell, which a rank rings when it posts a non-blocking collective (at most
 * {@value #QUIET_PARK_NANOS} ns without a ring, so blocking collectives, which ring nothing, are still seen).
 *
 * <p>Registrations are read and channels assembled on the proxy's main thread ({@link #discover}, {@link #rankGone});
 * the helpers see the set of channels through one volatile list.
 */
final class ProxyAssist implements AutoCloseable {
    /** System property: the helper threads. */
    static final String HELPERS_PROPERTY = "gdasync.coll.proxy.helpers";
    /** System property: the grace, in microseconds, a rank has to fill its own buffer before a helper does. */
    static final String GRACE_PROPERTY = "gdasync.coll.proxy.graceMicros";
    /**
     * Without a fill (or a rank's ring of the bell) for this long, a helper sleeps on the queue's bell between looks
     * instead of yielding; a rank that posts a non-blocking collective rings it.
     */
    private static final long QUIET_NANOS = 20_000_000L;
    private static final long QUIET_PARK_NANOS = 200_000L;

    private final ProxyQueue queue;
    private final QueuePair[] qps;
    private final int[] seen;
    private final long graceNanos;
    /** Registrations of channels not every member registered yet, by context. */
    private final Map<Integer, long[][]> assembling = new HashMap<>();
    private final Map<Integer, int[]> assemblingRanks = new HashMap<>();
    private volatile List<Served> served = List.of();
    private final List<Thread> helpers = new ArrayList<>();
    private volatile boolean stop;
    /** Fills done by the helpers (what the tests and the summary read). */
    private final AtomicLong fills = new AtomicLong();

    /** A channel the helpers serve: its members' world ranks and the assistant over their areas. */
    private record Served(int context, int[] worldRanks, ShmAssistant assistant) {
        boolean involves(int rank) {
            for (int w : worldRanks) {
                if (w == rank) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * @param queue the proxy's queue
     * @param qps   the proxy's queue pair to each rank of the host (null until the rank attached), read by the helpers
     */
    ProxyAssist(ProxyQueue queue, QueuePair[] qps) {
        this.queue = queue;
        this.qps = qps;
        this.seen = new int[qps.length];
        this.graceNanos = Long.getLong(GRACE_PROPERTY, 5) * 1000;
        int n = Integer.getInteger(HELPERS_PROPERTY, 2);
        if (n < 0) {
            throw new IllegalArgumentException(HELPERS_PROPERTY + " must be >= 0, got " + n);
        }
        for (int i = 0; i < n; i++) {
            helpers.add(Thread.ofPlatform().daemon().name("coll-proxy-helper-" + i).start(this::help));
        }
    }

    /**
     * Reads rank r's new channel registrations and starts serving every channel all of whose members registered.
     *
     * @param r a connected rank of this host
     * @return how many registrations were read
     */
    int discover(int r) {
        int count = queue.channels(r);
        int read = 0;
        while (seen[r] < count) {
            long[] rec = queue.channel(r, seen[r]++);
            read++;
            int context = (int) rec[0];
            int members = (int) rec[1];
            int index = (int) rec[2];
            long[][] recs = assembling.computeIfAbsent(context, c -> new long[members][]);
            int[] ranks = assemblingRanks.computeIfAbsent(context, c -> new int[members]);
            if (recs.length != members || index < 0 || index >= members) {
                assembling.remove(context);
                assemblingRanks.remove(context);
                continue; // the members disagree on the communicator: serve nothing, the ranks fill their own
            }
            recs[index] = rec;
            ranks[index] = r;
            boolean complete = true;
            for (long[] x : recs) {
                complete &= x != null;
            }
            if (complete) {
                assembling.remove(context);
                assemblingRanks.remove(context);
                serve(context, recs, ranks);
            }
        }
        return read;
    }

    private void serve(int context, long[][] recs, int[] ranks) {
        MemorySegment[] areas = new MemorySegment[recs.length];
        long slot = recs[0][6];
        for (int m = 0; m < recs.length; m++) {
            QueuePair qp = qps[ranks[m]];
            areas[m] = qp == null || recs[m][6] != slot ? null : qp.peerMemory(recs[m][4], recs[m][3], recs[m][5]);
            if (areas[m] == null) {
                return; // not mappable here: the ranks fill their own buffers
            }
        }
        ShmAssistant assistant = new ShmAssistant(areas, slot, (m, address, key, bytes) -> {
            QueuePair qp = qps[ranks[m]];
            return qp == null ? null : qp.peerMemory(key, address, bytes);
        }, graceNanos);
        Served s = new Served(context, ranks, assistant);
        change(x -> x.context() == context, s);
    }

    /** Removes the served channels that match and adds one (or none): the only writer of {@link #served}. */
    private synchronized void change(Predicate<Served> remove, Served add) {
        List<Served> next = new ArrayList<>(served);
        boolean changed = next.removeIf(remove);
        if (add != null) {
            next.add(add);
        }
        if (changed || add != null) {
            served = List.copyOf(next);
        }
    }

    /** A rank is gone (died, or closed its collectives): the channels it belongs to are no longer served. */
    void rankGone(int r) {
        seen[r] = 0;
        change(s -> s.involves(r), null);
        assemblingRanks.entrySet().removeIf(e -> {
            long[][] recs = assembling.get(e.getKey());
            for (int m = 0; m < e.getValue().length; m++) {
                if (recs[m] != null && e.getValue()[m] == r) {
                    assembling.remove(e.getKey());
                    return true;
                }
            }
            return false;
        });
    }

    /** @return the buffers the helpers filled so far */
    long fills() {
        return fills.get();
    }

    /** @return how many channels are served */
    int channels() {
        return served.size();
    }

    private void help() {
        long lastFill = System.nanoTime();
        int idle = 0;
        while (!stop) {
            // Read before the look: a post after it moves the bell, and the sleep below then ends at once.
            int bell = queue.bell();
            List<Served> now = served;
            long t = System.nanoTime();
            int work = 0;
            for (Served s : now) {
                try {
                    work += s.assistant().pass(t);
                } catch (RuntimeException e) {
                    // A member's memory went away under the fill (it died or closed): stop serving the channel.
                    drop(s);
                }
            }
            if (work > 0) {
                fills.addAndGet(work);
                lastFill = t;
                idle = 0;
            } else if (now.isEmpty() || t - lastFill > QUIET_NANOS) {
                if (queue.sleepOnBell(bell, QUIET_PARK_NANOS)) {
                    // A rank posted a non-blocking collective: stay awake (yielding) to fill it after the grace.
                    lastFill = System.nanoTime();
                    idle = 0;
                }
            } else if (++idle < 64) {
                // The proxy's helpers idle on their own terms: between fills they sleep on the bell the ranks ring
                // (a futex), and only this short spin-then-yield runs while a collective may still come.
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    private void drop(Served s) {
        change(x -> x == s, null);
    }

    /** Stops the helper threads. */
    @Override
    public void close() {
        stop = true;
        for (Thread t : helpers) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
