package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.trace.FlightRecording;
import dev.gdasync.libmp.bootstrap.EnvNames;
import dev.gdasync.libmp.bootstrap.JobIds;
import dev.gdasync.libmp.proxy.CollProxy;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One launch: starts the ranks, watches them, ends them all, and then says what happened.
 *
 * <p>Every rank runs the same JVM command line ({@code jvm}), with in its environment {@code GDASYNC_RANK},
 * {@code GDASYNC_SIZE}, {@code GDASYNC_RENDEZVOUS} (127.0.0.1 and a free port), {@code GDASYNC_SECRET} (32 fresh
 * random bytes) and {@code GDASYNC_JOB_ID}. When a rank exits with a non-zero status the others get the grace
 * period to end by themselves (and print their own errors); then they are stopped (SIGTERM, then SIGKILL,
 * descendants included). The launcher's own lines come last, after every rank's output was copied, so a failed
 * rank's explanation is read first: which ranks failed and how, and which were stopped. It exits with the first
 * failed rank's status.
 *
 * <p>On SIGINT (Ctrl-C) or SIGTERM a shutdown hook says "interrupted" and stops every rank before the launcher
 * exits; if the launcher is killed outright, {@link ParentDeath} ends them. When every rank has ended, the
 * shared-memory directories that dead processes left under the ranks' base are removed
 * ({@link ShmDirectory#cleanStale}), so a rank killed with SIGKILL leaves nothing of the job behind.
 *
 * <p>With {@code --netns K} rank r runs in the network namespace of host {@code r % K}
 * ({@link NetNamespaces}), started as {@code ip netns exec gdasync-hk java ...}: ip execs the JVM, so the
 * launcher's child is the rank's JVM itself and stopping it works as without namespaces. The rendezvous is
 * then host 0's address (rank 0 runs there and listens on its namespace's interfaces), which every
 * namespace reaches over the bridge; each rank also gets {@code GDASYNC_NETNS} (its namespace) and
 * {@code GDASYNC_NETNS_ADDRESS} (its namespace's address).
 *
 * <p>With {@code --proxies} the host's collective proxy ({@link CollProxy}) starts first, with the job's id, the
 * rank count and the locator file it publishes its queue in; every rank gets that locator and
 * {@code GDASYNC_COLL_ENGINE=offload}. The proxy is not a rank: its exit decides nothing, and it is stopped (and
 * its locator removed) when the ranks have ended. With {@code --netns K} too, one proxy starts per host, in that
 * host's namespace, with its own locator ({@code coll-proxy-<job>-hK}), the host of every rank
 * ({@code GDASYNC_COLL_PLACEMENT}), its host and a rendezvous of its own (the proxies' bootstrap, on host 0's
 * address); each rank gets its own host's locator.
 *
 * <p>With {@code --jfr DIR} rank r's JVM starts with {@link FlightRecording#jvmOption} ({@code DIR/rank-r.jfr}, the
 * settings file the launcher wrote into DIR); the JVM writes the file when it exits.
 */
final class Job {
    private static final Duration STOP_PATIENCE = Duration.ofSeconds(2);
    private static final Duration DRAIN = Duration.ofSeconds(2);

    private final LaunchOptions options;
    private final List<String> jvm;
    /** The collective proxy's command line, or empty without --proxies. */
    private final List<String> proxyJvm;
    private final List<ProxyProcess> proxies = new ArrayList<>();
    private final Path shmBase;
    private final List<String> netnsExec;
    private final PrintStream out;
    private final PrintStream err;
    private final List<RankProcess> ranks = new ArrayList<>();
    private final LinkedBlockingQueue<int[]> exits = new LinkedBlockingQueue<>();
    private final Object lifecycle = new Object();
    private boolean finished;
    private boolean interrupted;

    /**
     * @param options   the launch
     * @param jvm       every rank's command line: the java binary, its options, the main class and its arguments
     * @param shmBase   the shared-memory base the ranks use (cleaned of dead processes' directories at the end)
     * @param netnsExec the command prefix that runs a program in a namespace, to which the namespace's
     *                  name is appended ({@link NetNamespaces#ensureUp}); empty without --netns
     */
    Job(LaunchOptions options, List<String> jvm, Path shmBase, List<String> netnsExec, PrintStream out, PrintStream err) {
        this(options, jvm, List.of(), shmBase, netnsExec, out, err);
    }

    /**
     * @param proxyJvm the collective proxy's command line (--proxies), or empty
     */
    Job(LaunchOptions options, List<String> jvm, List<String> proxyJvm, Path shmBase, List<String> netnsExec,
        PrintStream out, PrintStream err) {
        this.options = options;
        this.jvm = List.copyOf(jvm);
        this.proxyJvm = List.copyOf(proxyJvm);
        this.shmBase = shmBase;
        this.netnsExec = List.copyOf(netnsExec);
        this.out = out;
        this.err = err;
    }

    /** @return the launcher's exit status: 0 when every rank exited with 0 */
    int run() throws InterruptedException {
        Thread hook = new Thread(this::onSignal, "mprun-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            if (!startAll()) {
                stopRemaining();
                drainAll();
                cleanSharedMemory();
                return 1;
            }
            return supervise();
        } finally {
            synchronized (lifecycle) {
                finished = true;
            }
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down already: the hook does the rest
            }
        }
    }

    private boolean startAll() {
        // The port is free in the launcher's namespace; with --netns rank 0 listens in host 0's namespace,
        // whose ports are its own and in practice as free.
        String host = options.netns() > 0 ? NetNamespaces.address(0) : "127.0.0.1";
        String rendezvous = host + ":" + freePort();
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        String jobId = JobIds.random("mprun");
        // Started from this (the supervising) thread, which lives until the launcher exits: see ParentDeath.
        List<String> prefix = ParentDeath.prefix();
        // Variables that would compete with the launcher's (GDASYNC_SECRET_FILE) or confuse apps.
        List<String> unset = List.of(EnvNames.SECRET_FILE);
        int hosts = Math.max(1, options.netns());
        List<Path> locators = new ArrayList<>();
        if (!proxyJvm.isEmpty() && !startProxies(hosts, jobId, rendezvous, secret, prefix, unset, locators)) {
            return false;
        }
        for (int r = 0; r < options.ranks(); r++) {
            Map<String, String> env = new HashMap<>(Map.of(
                    EnvNames.RANK, Integer.toString(r),
                    EnvNames.SIZE, Integer.toString(options.ranks()),
                    EnvNames.RENDEZVOUS, rendezvous,
                    EnvNames.SECRET, HexFormat.of().formatHex(secret),
                    EnvNames.JOB_ID, jobId));
            if (!locators.isEmpty()) {
                env.put(EnvNames.COLL_PROXY, locators.get(NetNamespaces.hostOf(r, hosts)).toString());
                env.put(EnvNames.COLL_ENGINE, "offload");
            }
            List<String> command = new ArrayList<>(prefix);
            if (options.netns() > 0) {
                int h = NetNamespaces.hostOf(r, options.netns());
                command.addAll(netnsExec);
                command.add(NetNamespaces.name(h));
                env.put(EnvNames.NETNS, NetNamespaces.name(h));
                env.put(EnvNames.NETNS_ADDRESS, NetNamespaces.address(h));
            }
            if (options.jfr() != null) {
                // After the java binary: the rank's own recording file.
                command.add(jvm.getFirst());
                command.add(FlightRecording.jvmOption(options.jfr(), r));
                command.addAll(jvm.subList(1, jvm.size()));
            } else {
                command.addAll(jvm);
            }
            synchronized (lifecycle) {
                if (finished) {
                    return false; // a signal arrived while starting
                }
                try {
                    RankProcess p = RankProcess.start(r, command, env, unset, out, err);
                    ranks.add(p);
                    int rank = r;
                    Thread.ofPlatform().daemon().name("mprun-wait" + r).start(() -> awaitExit(rank, p.process()));
                } catch (IOException e) {
                    err.println("mprun: cannot start rank " + r + ": " + e.getMessage());
                    return false;
                }
            }
        }
        return true;
    }

    /** Starts one collective proxy per host (in its namespace with --netns); their locators go into locators. */
    private boolean startProxies(int hosts, String jobId, String ranksRendezvous, byte[] secret, List<String> prefix,
                                 List<String> unset, List<Path> locators) {
        StringBuilder placement = new StringBuilder();
        for (int r = 0; r < options.ranks(); r++) {
            placement.append(r == 0 ? "" : ",").append(NetNamespaces.hostOf(r, hosts));
        }
        String host = ranksRendezvous.substring(0, ranksRendezvous.lastIndexOf(':') + 1);
        String rendezvous = host + freePort();
        while (rendezvous.equals(ranksRendezvous)) {
            rendezvous = host + freePort(); // the proxies' bootstrap listens beside rank 0's, on host 0
        }
        for (int h = 0; h < hosts; h++) {
            Path locator = ShmDirectory.userRoot(shmBase).resolve("coll-proxy-" + jobId + (hosts > 1 ? "-h" + h : ""));
            locators.add(locator);
            Map<String, String> env = new HashMap<>(Map.of(EnvNames.SIZE, Integer.toString(options.ranks()),
                    EnvNames.JOB_ID, jobId, EnvNames.COLL_PROXY, locator.toString()));
            List<String> command = new ArrayList<>(prefix);
            if (hosts > 1) {
                env.putAll(Map.of(EnvNames.COLL_PLACEMENT, placement.toString(), EnvNames.COLL_HOST, Integer.toString(h),
                        EnvNames.COLL_RENDEZVOUS, rendezvous, EnvNames.SECRET, HexFormat.of().formatHex(secret)));
                command.addAll(netnsExec);
                command.add(NetNamespaces.name(h));
            }
            command.addAll(proxyJvm);
            try {
                proxies.add(ProxyProcess.start(command, env, unset, locator, hosts > 1 ? "proxy h" + h : "proxy", out, err));
            } catch (IOException e) {
                err.println("mprun: cannot start the collective proxy" + (hosts > 1 ? " of host " + h : "") + ": "
                        + e.getMessage());
                return false;
            }
        }
        return true;
    }

    private void awaitExit(int rank, Process p) {
        while (true) {
            try {
                exits.add(new int[]{rank, p.waitFor()});
                return;
            } catch (InterruptedException e) {
                // keep waiting: the launcher needs every exit
            }
        }
    }

    private int supervise() throws InterruptedException {
        int running = ranks.size();
        List<int[]> failures = new ArrayList<>();
        long graceDeadline = 0;
        List<Integer> stopped = List.of();
        while (running > 0) {
            int[] exit;
            if (failures.isEmpty()) {
                exit = exits.take();
            } else {
                exit = exits.poll(graceDeadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (exit == null) {
                    stopped = stopRemaining();
                    break;
                }
            }
            running--;
            if (exit[1] != 0) {
                failures.add(exit);
                if (failures.size() == 1) {
                    graceDeadline = System.nanoTime() + options.grace().toNanos();
                }
            }
        }
        drainAll();
        cleanSharedMemory();
        report(failures, stopped);
        return failures.isEmpty() ? 0 : Math.max(1, Math.min(255, failures.getFirst()[1]));
    }

    /** Says which ranks failed, the first failure's kind first, and which were stopped; nothing after Ctrl-C. */
    private void report(List<int[]> failures, List<Integer> stopped) {
        synchronized (lifecycle) {
            if (interrupted) {
                return; // the shutdown hook said so
            }
        }
        Map<String, List<Integer>> byHow = new LinkedHashMap<>();
        for (int[] f : failures) {
            byHow.computeIfAbsent(describe(f[1]), k -> new ArrayList<>()).add(f[0]);
        }
        for (Map.Entry<String, List<Integer>> e : byHow.entrySet()) {
            e.getValue().sort(null); // the first failure's kind comes first; within a kind, ranks in order
            String how = e.getKey().startsWith("killed") ? (e.getValue().size() == 1 ? "was " : "were ") + e.getKey() : e.getKey();
            err.println("mprun: " + ranksWord(e.getValue()) + " " + how);
        }
        if (!stopped.isEmpty()) {
            err.println("mprun: stopped " + ranksWord(stopped) + " (still running " + seconds(options.grace())
                    + " after rank " + failures.getFirst()[0] + " failed)");
        }
        err.flush();
    }

    /** Stops every rank still running; says nothing but what survived. @return the ranks it stopped */
    private List<Integer> stopRemaining() throws InterruptedException {
        List<RankProcess> alive;
        synchronized (lifecycle) {
            alive = ranks.stream().filter(r -> r.process().isAlive()).toList();
        }
        List<ProcessHandle> survivors = RankProcess.stop(alive, STOP_PATIENCE);
        if (!survivors.isEmpty()) {
            err.println("mprun: processes " + survivors.stream().map(ProcessHandle::pid).toList() + " survived SIGKILL");
        }
        return alive.stream().map(RankProcess::rank).sorted().toList();
    }

    private void drainAll() throws InterruptedException {
        List<RankProcess> all;
        synchronized (lifecycle) {
            all = List.copyOf(ranks);
        }
        for (RankProcess r : all) {
            r.drain(DRAIN);
        }
    }

    /** Removes what dead processes left in shared memory under the ranks' base (a rank killed with SIGKILL). */
    private void cleanSharedMemory() throws InterruptedException {
        for (ProxyProcess proxy : proxies) {
            proxy.stop(STOP_PATIENCE, DRAIN, err);
        }
        try {
            ShmDirectory.cleanStale(ShmDirectory.userRoot(shmBase));
        } catch (UncheckedIOException | SecurityException e) {
            err.println("mprun: could not clean " + ShmDirectory.userRoot(shmBase) + ": " + e.getMessage());
        }
    }

    /** The shutdown hook: a signal (or System.exit elsewhere) while ranks run stops them all. */
    private void onSignal() {
        synchronized (lifecycle) {
            if (finished) {
                return;
            }
            finished = true; // no rank starts after this
            interrupted = true;
        }
        err.println("mprun: interrupted; stopping every rank");
        err.flush();
        try {
            stopRemaining();
            drainAll();
            cleanSharedMemory();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort() {
        return dev.gdasync.libmp.bootstrap.RendezvousPorts.pick(InetAddress.getLoopbackAddress());
    }

    /** @return "rank 3", "ranks 0 and 2", "ranks 0, 1 and 2" */
    static String ranksWord(List<Integer> ranks) {
        if (ranks.size() == 1) {
            return "rank " + ranks.getFirst();
        }
        List<String> s = ranks.stream().map(String::valueOf).toList();
        return "ranks " + String.join(", ", s.subList(0, s.size() - 1)) + " and " + s.getLast();
    }

    /** Says how a rank ended, by its exit status (the JDK reports death by signal N as 128 + N). */
    static String describe(int status) {
        if (status > 128 && status < 128 + 65) {
            int sig = status - 128;
            String name = switch (sig) {
                case 1 -> "SIGHUP";
                case 2 -> "SIGINT";
                case 3 -> "SIGQUIT";
                case 6 -> "SIGABRT";
                case 9 -> "SIGKILL";
                case 11 -> "SIGSEGV";
                case 15 -> "SIGTERM";
                default -> "signal " + sig;
            };
            return "killed by " + name + " (exit status " + status + ")";
        }
        return "exited with status " + status;
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() / 1000.0 + " s";
    }
}
