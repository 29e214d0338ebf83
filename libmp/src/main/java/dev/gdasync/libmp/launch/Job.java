package dev.gdasync.libmp.launch;

import dev.gdasync.libmp.bootstrap.JobIds;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One launch: starts the ranks, watches them, and ends them all.
 *
 * <p>Every rank is a JVM with this JVM's java binary and class path, and in its environment
 * {@code GDASYNC_RANK}, {@code GDASYNC_SIZE}, {@code GDASYNC_RENDEZVOUS} (127.0.0.1 and a free port),
 * {@code GDASYNC_SECRET} (32 fresh random bytes) and {@code GDASYNC_JOB_ID}. When a rank exits with a
 * non-zero status the launcher says which and how, gives the others the grace period to end by
 * themselves (and print their own errors), then stops them (SIGTERM, then SIGKILL, descendants
 * included) and exits with the failed rank's status. On SIGINT or SIGTERM a shutdown hook stops every
 * rank before the launcher exits; if the launcher is killed outright, {@link ParentDeath} ends them.
 *
 * <p>With {@code --netns K} rank r runs in the network namespace of host {@code r % K}
 * ({@link NetNamespaces}), started as {@code ip netns exec gdasync-hk java ...}: ip execs the JVM, so the
 * launcher's child is the rank's JVM itself and stopping it works as without namespaces. The rendezvous is
 * then host 0's address (rank 0 runs there and listens on its namespace's interfaces), which every
 * namespace reaches over the bridge; each rank also gets {@code GDASYNC_NETNS} (its namespace) and
 * {@code GDASYNC_NETNS_ADDRESS} (its namespace's address).
 */
final class Job {
    private static final Duration STOP_PATIENCE = Duration.ofSeconds(2);
    private static final Duration DRAIN = Duration.ofSeconds(2);

    private final LaunchOptions options;
    private final String mainClass;
    private final List<String> netnsExec;
    private final PrintStream out;
    private final PrintStream err;
    private final List<RankProcess> ranks = new ArrayList<>();
    private final LinkedBlockingQueue<int[]> exits = new LinkedBlockingQueue<>();
    private final Object lifecycle = new Object();
    private boolean finished;

    /**
     * @param netnsExec the command prefix that runs a program in a namespace, to which the namespace's
     *                  name is appended ({@link NetNamespaces#ensureUp}); empty without --netns
     */
    Job(LaunchOptions options, String mainClass, List<String> netnsExec, PrintStream out, PrintStream err) {
        this.options = options;
        this.mainClass = mainClass;
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
                stopRemaining("a rank could not be started");
                return 1;
            }
            int status = supervise();
            drainAll();
            return status;
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
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // Started from this (the supervising) thread, which lives until the launcher exits: see ParentDeath.
        List<String> prefix = ParentDeath.prefix();
        List<String> jvm = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED"));
        jvm.addAll(options.jvmOpts());
        jvm.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        jvm.addAll(options.appArgs());
        // Variables that would compete with the launcher's (GDASYNC_SECRET_FILE) or confuse apps.
        List<String> unset = List.of("GDASYNC_SECRET_FILE");
        for (int r = 0; r < options.ranks(); r++) {
            Map<String, String> env = new HashMap<>(Map.of(
                    "GDASYNC_RANK", Integer.toString(r),
                    "GDASYNC_SIZE", Integer.toString(options.ranks()),
                    "GDASYNC_RENDEZVOUS", rendezvous,
                    "GDASYNC_SECRET", HexFormat.of().formatHex(secret),
                    "GDASYNC_JOB_ID", jobId));
            List<String> command = new ArrayList<>(prefix);
            if (options.netns() > 0) {
                int h = NetNamespaces.hostOf(r, options.netns());
                command.addAll(netnsExec);
                command.add(NetNamespaces.name(h));
                env.put("GDASYNC_NETNS", NetNamespaces.name(h));
                env.put("GDASYNC_NETNS_ADDRESS", NetNamespaces.address(h));
            }
            command.addAll(jvm);
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
        int[] firstFailure = null;
        long graceDeadline = 0;
        while (running > 0) {
            int[] exit;
            if (firstFailure == null) {
                exit = exits.take();
            } else {
                exit = exits.poll(graceDeadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (exit == null) {
                    stopRemaining("still running " + seconds(options.grace()) + " after rank " + firstFailure[0] + " failed");
                    break;
                }
            }
            running--;
            if (exit[1] != 0) {
                err.println("mprun: rank " + exit[0] + " " + describe(exit[1]));
                if (firstFailure == null) {
                    firstFailure = exit;
                    graceDeadline = System.nanoTime() + options.grace().toNanos();
                    if (running > 0) {
                        err.println("mprun: the other ranks have " + seconds(options.grace()) + " to end before they are killed");
                    }
                }
            }
        }
        return firstFailure == null ? 0 : Math.max(1, Math.min(255, firstFailure[1]));
    }

    private void stopRemaining(String why) throws InterruptedException {
        List<RankProcess> alive;
        synchronized (lifecycle) {
            alive = ranks.stream().filter(r -> r.process().isAlive()).toList();
        }
        if (!alive.isEmpty()) {
            err.println("mprun: killing rank(s) " + alive.stream().map(RankProcess::rank).toList() + " (" + why + ")");
        }
        List<ProcessHandle> survivors = RankProcess.stop(alive, STOP_PATIENCE);
        if (!survivors.isEmpty()) {
            err.println("mprun: processes " + survivors.stream().map(ProcessHandle::pid).toList() + " survived SIGKILL");
        }
    }

    private void drainAll() throws InterruptedException {
        for (RankProcess r : ranks) {
            r.drain(DRAIN);
        }
    }

    /** The shutdown hook: a signal (or System.exit elsewhere) while ranks run stops them all. */
    private void onSignal() {
        synchronized (lifecycle) {
            if (finished) {
                return;
            }
            finished = true; // no rank starts after this
        }
        try {
            stopRemaining("the launcher was interrupted");
            drainAll();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort() {
        return dev.gdasync.libmp.bootstrap.RendezvousPorts.pick(InetAddress.getLoopbackAddress());
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
            return "was killed by " + name + " (exit status " + status + ")";
        }
        return "exited with status " + status;
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() / 1000.0 + " s";
    }
}
