package dev.gdasync.gdsync.concurrent;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.SleepingIdleStrategy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * This process's share of the host's CPUs: it registers the ranks it hosts in the {@link CpuRegistry}, watches the
 * other gdasync processes there and the CPU time other processes take ({@link ForeignLoad}), and decides
 * ({@link CpuShareDecision}) whether the ranks and other processes competing for its CPUs outnumber them. When they do, every {@link BackoffIdler} of the process yields instead of spinning
 * ({@link #yielding()}): a waiting thread gives its CPU to the thread that would answer it, as MPI libraries do
 * when oversubscribed. A stream or kernel thread is pinned only where {@link #cpuFor} says so: never to a CPU
 * another job pinned, and not at all when oversubscribed.
 *
 * <p>The state is the process's (the idlers are everywhere): {@link #join} is called by each rank (libmp's
 * {@code Mp}), and the returned {@link Seat} is closed when the rank closes. While a seat is open a watcher thread
 * ({@code gdasync-cpu-share}, an agent that sleeps {@value #WATCH_MILLIS} ms between looks) re-reads the registry,
 * so a job that started alone starts yielding within that time once a second job arrives, and stops when it leaves.
 *
 * <p>{@value #YIELD_PROPERTY} (or {@value #YIELD_ENV}) overrides the decision: {@code always} yields, {@code never}
 * spins whatever the registry says; {@code auto} (the default) decides. {@value #OTHERS_PROPERTY}{@code =no} leaves
 * other processes' CPU time out of it (the registry's ranks alone decide).
 */
public final class CpuShare {
    /** System property overriding the decision: auto, always or never. */
    public static final String YIELD_PROPERTY = "gdasync.yield";
    /** Environment variable overriding the decision, when the property is not set. */
    public static final String YIELD_ENV = "GDASYNC_YIELD";
    /**
     * System property: whether the CPU time of processes that are not gdasync ranks counts in the decision
     * ({@code yes}, the default) or only the registry's ranks do ({@code no}).
     */
    public static final String OTHERS_PROPERTY = "gdasync.yield.others";
    /** How often the watcher re-reads the registry. */
    static final long WATCH_MILLIS = 100;

    /** Whether idlers yield: read on every idle of every {@link BackoffIdler}, written by the watcher. */
    private static volatile boolean yielding = yieldMode() == YieldMode.ALWAYS;
    /** Whether the registered ranks leave a CPU free: written with {@link #yielding}. */
    private static volatile boolean spareCpu;

    private static final Object LOCK = new Object();
    // Guarded by LOCK.
    private static CpuRegistry registry;
    private static final List<CpuShareEntry.Rank> ranks = new ArrayList<>();
    private static final Map<Thread, Integer> pins = new LinkedHashMap<>();
    /** The kernel thread ids of the pinned threads, to unpin them from the watcher. */
    private static final Map<Thread, Integer> pinnedTids = new LinkedHashMap<>();
    private static List<Integer> allowed = List.of();
    private static CpuShareEntry written;
    private static CpuShareDecision decision;
    /** The load of processes that are not gdasync ranks on the allowed CPUs, sampled at every refresh. */
    private static ForeignLoad foreign;
    /** {@link #ownStartMillis()}, or -1 before it was read. */
    private static long ownStart = -1;
    private static AgentThread watcher;
    private static Watcher watcherAgent;

    /** How the decision may be overridden. */
    enum YieldMode {
        AUTO, ALWAYS, NEVER
    }

    private CpuShare() {
    }

    /** @return whether this process's waits should yield rather than spin: it shares its CPUs with too many ranks */
    public static boolean yielding() {
        return yielding;
    }

    /**
     * Whether the ranks sharing this process's CPUs leave at least one CPU without a rank, so that a helper thread
     * (the software NIC's agent retrying a stalled send) may keep polling instead of parking without taking a CPU
     * a rank needs. False before any rank joined, and whenever {@link #yielding()} is true.
     *
     * @return whether a CPU is spare
     */
    public static boolean spareCpu() {
        return spareCpu;
    }

    /**
     * Registers a rank of this process in the registry of a shared-memory base, and starts watching it.
     *
     * @param registryDir the registry's directory ({@code <base>/gdasync-<user>/cpu-share}); while seats are open,
     *                    the first one's directory is used
     * @param job         the rank's job
     * @param rank        the rank
     * @return the seat; close it when the rank closes
     */
    public static Seat join(Path registryDir, String job, int rank) {
        Objects.requireNonNull(registryDir, "registryDir must not be null");
        Objects.requireNonNull(job, "job must not be null");
        CpuShareEntry.Rank r = new CpuShareEntry.Rank(job, rank);
        synchronized (LOCK) {
            if (registry == null || (ranks.isEmpty() && !registry.dir().equals(registryDir))) {
                registry = new CpuRegistry(registryDir);
                allowed = processAllowedCpus();
                foreign = new ForeignLoad(allowed);
            }
            ranks.add(r);
            refreshLocked();
            if (watcher == null) {
                watcherAgent = new Watcher();
                watcher = AgentThread.start(watcherAgent, new SleepingIdleStrategy(WATCH_MILLIS * 1_000_000));
            }
        }
        return new Seat(r);
    }

    /**
     * The CPU a rank may pin its hot thread (a stream's or a kernel's) to, looked up now.
     *
     * @param job  the rank's job
     * @param rank the rank
     * @return the CPU, or -1 not to pin (oversubscribed, the free CPUs ran out, or the rank has not joined)
     */
    public static int cpuFor(String job, int rank) {
        synchronized (LOCK) {
            if (registry == null) {
                return -1;
            }
            return CpuShareDecision.decide(allowed, entriesLocked(), job, othersBusyLocked()).cpuFor(rank);
        }
    }

    /**
     * Pins the calling thread to a CPU and records the pin in the registry, so that other jobs leave that CPU alone;
     * the record goes when the thread ends.
     *
     * @param cpu the CPU, from {@link #cpuFor}
     * @return whether the thread is now pinned
     */
    public static boolean pinCurrentThread(int cpu) {
        if (!ThreadAffinity.pinCurrentThread(cpu)) {
            return false;
        }
        int tid = ThreadAffinity.currentThreadId();
        synchronized (LOCK) {
            pins.keySet().removeIf(t -> !t.isAlive());
            pins.put(Thread.currentThread(), cpu);
            pinnedTids.put(Thread.currentThread(), tid);
            if (registry != null) {
                refreshLocked();
            }
        }
        return true;
    }

    /**
     * @param job a job
     * @return the decision for that job as of now, or null before any rank joined
     */
    public static CpuShareDecision decision(String job) {
        synchronized (LOCK) {
            if (registry == null) {
                return null;
            }
            return CpuShareDecision.decide(allowed, entriesLocked(), job, othersBusyLocked());
        }
    }

    /** @return a line saying whether this process yields and why */
    public static String describe() {
        synchronized (LOCK) {
            String why = switch (yieldMode()) {
                case ALWAYS -> " (" + YIELD_PROPERTY + "=always)";
                case NEVER -> " (" + YIELD_PROPERTY + "=never)";
                case AUTO -> "";
            };
            String d = decision == null ? "no rank registered" : decision.describe();
            return String.format(Locale.ROOT, "cpu share: %s; waits %s%s", d, yielding ? "yield" : "spin", why);
        }
    }

    private static void refresh() {
        synchronized (LOCK) {
            if (registry != null) {
                refreshLocked();
            }
        }
    }

    /** Rewrites this process's entry if it changed, re-reads the others and decides again. */
    private static void refreshLocked() {
        pins.keySet().removeIf(t -> !t.isAlive());
        pinnedTids.keySet().retainAll(pins.keySet());
        List<CpuShareEntry> entries = entriesLocked();
        String job = ranks.isEmpty() ? "" : ranks.getFirst().job();
        double others = foreign == null || !countsOthers() ? 0 : foreign.sample(entries.stream().map(CpuShareEntry::pid).toList());
        decision = CpuShareDecision.decide(allowed, entries, job, others);
        if (!pins.isEmpty() && (decision.oversubscribed() || !java.util.Collections.disjoint(pins.values(), decision.pinnedByOthers()))) {
            // A job arrived after this one pinned: a pinned spinning thread would hold its CPU against the newcomer's
            // (which pins nothing then), so let the pinned threads float again and say so in the registry.
            unpinLocked();
            entries = entriesLocked();
            decision = CpuShareDecision.decide(allowed, entries, job, others);
        }
        YieldMode mode = yieldMode();
        yielding = mode == YieldMode.ALWAYS || (mode == YieldMode.AUTO && decision.oversubscribed());
        spareCpu = !yielding && !ranks.isEmpty() && decision.ranks() < Math.max(1, allowed.size());
    }

    private static void unpinLocked() {
        for (Map.Entry<Thread, Integer> e : pinnedTids.entrySet()) {
            ThreadAffinity.setAffinity(e.getValue(), allowed);
        }
        pins.clear();
        pinnedTids.clear();
    }

    /** @return the live entries, this process's written first when it changed */
    private static List<CpuShareEntry> entriesLocked() {
        ProcessHandle me = ProcessHandle.current();
        long start = ownStartMillis();
        if (ranks.isEmpty()) {
            if (written != null) {
                registry.remove(me.pid(), start);
                written = null;
            }
        } else {
            CpuShareEntry mine = new CpuShareEntry(me.pid(), start, ranks, allowed, List.copyOf(new TreeSet<>(pins.values())));
            if (!mine.equals(written)) {
                try {
                    registry.write(mine);
                    written = mine;
                } catch (UncheckedIOException e) {
                    // no registry (a read-only base): this process decides alone
                }
            }
        }
        List<CpuShareEntry> entries = registry.read();
        if (written != null && entries.stream().noneMatch(e -> e.pid() == me.pid())) {
            entries.add(written);
        }
        return entries;
    }

    /** @return the CPUs other processes kept busy as of the last refresh */
    private static double othersBusyLocked() {
        return decision == null ? 0 : decision.othersBusy();
    }

    /** @return this process's start time (epoch ms; 0 where unknown), read once: it costs a few /proc reads */
    private static long ownStartMillis() {
        if (ownStart < 0) {
            ownStart = ProcessHandle.current().info().startInstant().map(s -> s.toEpochMilli()).orElse(0L);
        }
        return ownStart;
    }

    private static void leave(CpuShareEntry.Rank r) {
        AgentThread stop = null;
        synchronized (LOCK) {
            for (Iterator<CpuShareEntry.Rank> it = ranks.iterator(); it.hasNext(); ) {
                if (it.next().equals(r)) {
                    it.remove();
                    break;
                }
            }
            refreshLocked();
            if (ranks.isEmpty() && watcher != null) {
                stop = watcher;
                watcherAgent.closing = true;
                watcher = null;
                watcherAgent = null;
            }
        }
        if (stop != null) {
            stop.close(); // outside the lock: the watcher's last cycle may be waiting for it
        }
    }

    /** @return the CPUs this process may run on: its affinity mask (the process's, not the calling thread's) */
    static List<Integer> processAllowedCpus() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return CpuList.parse(line.substring("Cpus_allowed_list:".length()));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: ask the calling thread
        }
        return ThreadAffinity.allowedCpus();
    }

    /** @return whether other processes' CPU time counts ({@value #OTHERS_PROPERTY}) */
    static boolean countsOthers() {
        String v = System.getProperty(OTHERS_PROPERTY, "yes").strip().toLowerCase(Locale.ROOT);
        return !(v.equals("no") || v.equals("false") || v.equals("never"));
    }

    static YieldMode yieldMode() {
        String v = System.getProperty(YIELD_PROPERTY, System.getenv(YIELD_ENV));
        if (v == null || v.isBlank()) {
            return YieldMode.AUTO;
        }
        return switch (v.strip().toLowerCase(Locale.ROOT)) {
            case "always", "yes" -> YieldMode.ALWAYS;
            case "never", "no" -> YieldMode.NEVER;
            default -> YieldMode.AUTO;
        };
    }

    /** A rank's place in the share; closing it unregisters the rank. */
    public static final class Seat implements AutoCloseable {
        private final CpuShareEntry.Rank rank;
        private boolean closed;

        private Seat(CpuShareEntry.Rank rank) {
            this.rank = rank;
        }

        /** Unregisters the rank; the last seat of the process removes its entry and stops the watcher. */
        @Override
        public void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            leave(rank);
        }
    }

    /** The watcher: re-reads the registry every {@value #WATCH_MILLIS} ms. */
    private static final class Watcher implements Agent {
        volatile boolean closing;

        @Override
        public int doWork() {
            if (closing) {
                throw new AgentTerminationException("cpu share watcher closed", true);
            }
            refresh();
            return 0;
        }

        @Override
        public String roleName() {
            return "gdasync-cpu-share";
        }
    }
}
