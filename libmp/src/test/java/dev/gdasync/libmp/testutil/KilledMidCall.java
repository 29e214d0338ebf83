package dev.gdasync.libmp.testutil;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.bootstrap.JobEnvironment;
import dev.gdasync.libmp.bootstrap.RendezvousPorts;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rank killed while the others are blocked in a layer's call, for many calls in one set of rank JVMs.
 *
 * <p>Every case is a job of its own (its own rendezvous port, job id and {@link Mp}), and every rank JVM runs all the
 * cases at once, one thread per case: each case's thread joins its job, makes the set-up every rank makes (the
 * layer, its buffers, a first call so that later ones find everything prepared), and then, on the survivors, enters
 * the blocking call while the victim's thread does nothing. When every survivor's thread has announced its call, the
 * test kills the victim's JVM with SIGKILL: every job loses the same rank at the same moment, and each survivor's
 * thread prints how its call ended. So one launch of a few JVMs shows, for each blocking call of a layer, that the
 * survivors fail promptly naming the killed rank, where one launch per call would cost a JVM start each.
 *
 * <p>A rank's lines: {@code ready CASE} (set-up done), {@code blocked CASE} (a survivor entering the call),
 * {@code FAILED CASE NANOS CLASS: MESSAGE} ({@code System.nanoTime()} when the call threw; the clock is the same
 * in every process of the machine) or {@code RETURNED CASE NANOS} (the call returned), {@code SETUP-FAILED CASE ...}.
 */
public final class KilledMidCall {
    /** The waits of the layers under test: long, so that a survivor that only times out is plainly not prompt. */
    public static final Duration LAYER_TIMEOUT = Duration.ofSeconds(60);
    /** The rank whose JVM is killed. */
    public static final int VICTIM = 1;
    /** The number of ranks of every case's job. */
    public static final int RANKS = 3;
    /**
     * How soon after the kill every survivor's call must have failed: far above the design target (well under a
     * second on one host) for a loaded CI machine, far below the layers' timeouts, so it only tells a prompt
     * failure from one that waited for a timeout.
     */
    public static final long BOUND_MS = Long.getLong("gdasync.killed.bound.ms", 5_000);

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final byte[] SECRET = HexFormat.of().parseHex("0f1e2d3c4b5a69788796a5b4c3d2e1f0");

    /** A case's set-up on every rank: returns the blocking call the survivors then make. */
    @FunctionalInterface
    public interface Setup {
        /**
         * Makes what the call needs, collectively with the other ranks of the case's job.
         *
         * @param mp this rank's Mp of the case's job
         * @return the blocking call
         * @throws Exception if the set-up fails
         */
        BlockingCall prepare(Mp mp) throws Exception;
    }

    /** A blocking call of a layer. */
    @FunctionalInterface
    public interface BlockingCall {
        /**
         * Makes the call.
         *
         * @throws Exception how it ended when it did not return
         */
        void call() throws Exception;
    }

    /**
     * How one survivor's call ended.
     *
     * @param rank     the survivor
     * @param failed   whether it threw
     * @param afterMs  milliseconds from the kill to the end of the call
     * @param error    the exception's class and message (with its causes' messages), or "" when it returned
     */
    public record Outcome(int rank, boolean failed, long afterMs, String error) {
        @Override
        public String toString() {
            return "rank " + rank + (failed ? " failed " : " RETURNED ") + afterMs + " ms after the kill"
                    + (failed ? ": " + error : "");
        }
    }

    private KilledMidCall() {
    }

    // ---- the rank side ----

    /**
     * The body of a rank main: {@code RANK JOBTAG CASE=PORT...}. Never returns normally on the survivors (it halts
     * once every case ended, without closing what the killed rank would be waited for in); the victim sleeps until
     * it is killed.
     *
     * @param args  the arguments
     * @param cases the layer's cases by name
     * @throws InterruptedException if interrupted
     */
    public static void rankMain(String[] args, Map<String, Setup> cases) throws InterruptedException {
        int rank = Integer.parseInt(args[0]);
        String tag = args[1];
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(LAYER_TIMEOUT);
        List<Thread> threads = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            String name = args[i].substring(0, args[i].indexOf('='));
            int port = Integer.parseInt(args[i].substring(args[i].indexOf('=') + 1));
            Setup setup = cases.get(name);
            if (setup == null) {
                throw new IllegalArgumentException("no case " + name + " among " + cases.keySet());
            }
            threads.add(Thread.ofPlatform().name(name).start(() -> runCase(rank, tag, name, port, setup, cfg)));
        }
        System.out.println("pid " + ProcessHandle.current().pid());
        if (rank == VICTIM) {
            Thread.sleep(Duration.ofMinutes(5));
            Runtime.getRuntime().halt(3);
        }
        for (Thread t : threads) {
            t.join(TimeUnit.MINUTES.toMillis(3));
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    private static void runCase(int rank, String tag, String name, int port, Setup setup, MpConfig cfg) {
        BlockingCall call;
        try {
            JobEnvironment env = JobEnvironment.of(rank, RANKS, "127.0.0.1:" + port, SECRET,
                    tag + "-" + name.replaceAll("[^A-Za-z0-9_.-]", "_"), LAYER_TIMEOUT);
            Mp mp = Mp.init(EnvBootstrap.connect(env), cfg);
            call = setup.prepare(mp);
        } catch (Throwable e) {
            System.out.println("SETUP-FAILED " + name + " " + describe(e));
            return;
        }
        System.out.println("ready " + name);
        if (rank == VICTIM) {
            return;
        }
        System.out.println("blocked " + name);
        try {
            call.call();
            System.out.println("RETURNED " + name + " " + System.nanoTime());
        } catch (Throwable e) {
            long at = System.nanoTime();
            System.out.println("FAILED " + name + " " + at + " " + describe(e));
        }
    }

    /**
     * @param e an exception
     * @return its class and message, then each cause's, joined by " / caused by "
     */
    public static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (!sb.isEmpty()) {
                sb.append(" / caused by ");
            }
            sb.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
            if (t.getCause() == t) {
                break;
            }
        }
        return sb.toString().replace('\n', ' ');
    }

    // ---- the test side ----

    /**
     * Starts {@link #RANKS} rank JVMs running {@code main} with every case, waits until every survivor is in every
     * call, kills the victim's JVM and collects how each survivor's call ended.
     *
     * @param main  a rank main that calls {@link #rankMain}
     * @param cases the case names
     * @return per case, the survivors' outcomes
     */
    public static Map<String, List<Outcome>> killVictim(Class<?> main, List<String> cases) throws InterruptedException {
        String tag = "kill" + ProcessHandle.current().pid() + "x" + (System.nanoTime() % 100_000);
        List<String> caseArgs = new ArrayList<>();
        // Every case's rank 0 binds its own port while the others run: two cases given the same free port (random
        // picks, 14 of them in 12 000 ports) would fail one with "Address already in use".
        Set<Integer> taken = new HashSet<>();
        for (String c : cases) {
            int port;
            do {
                port = RendezvousPorts.pick(InetAddress.getLoopbackAddress());
            } while (!taken.add(port));
            caseArgs.add(c + "=" + port);
        }
        List<ChildProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < RANKS; r++) {
                List<String> args = new ArrayList<>(List.of(String.valueOf(r), tag));
                args.addAll(caseArgs);
                ranks.add(ChildProcess.start("rank" + r, ChildProcess.javaCommand(main, args), Map.of()));
            }
            for (int r = 0; r < RANKS; r++) {
                ChildProcess p = ranks.get(r);
                String expect = r == VICTIM ? "ready " : "blocked ";
                for (String c : cases) {
                    String line = p.awaitLine(l -> l.equals(expect + c) || l.startsWith("SETUP-FAILED "), WAIT);
                    assertTrue(line.equals(expect + c), "rank " + r + " could not set up: " + p.describe());
                }
            }
            Thread.sleep(300); // the survivors' threads go from their "blocked" line into the call
            long killedAt = System.nanoTime();
            ranks.get(VICTIM).kill();
            Map<String, List<Outcome>> out = new LinkedHashMap<>();
            for (String c : cases) {
                List<Outcome> per = new ArrayList<>();
                for (int r = 0; r < RANKS; r++) {
                    if (r == VICTIM) {
                        continue;
                    }
                    String line = ranks.get(r).awaitLine(l -> l.startsWith("FAILED " + c + " ")
                            || l.startsWith("RETURNED " + c + " "), WAIT);
                    String[] parts = line.split(" ", 4);
                    long ms = TimeUnit.NANOSECONDS.toMillis(Long.parseLong(parts[2]) - killedAt);
                    per.add(new Outcome(r, parts[0].equals("FAILED"), ms, parts.length > 3 ? parts[3] : ""));
                }
                out.put(c, per);
            }
            return out;
        } finally {
            ranks.forEach(ChildProcess::close);
        }
    }

    /**
     * Prints every outcome, then asserts that every survivor's call of every case failed within {@link #BOUND_MS}
     * with an error of the expected kind naming the killed rank.
     *
     * @param outcomes what {@link #killVictim} collected
     * @param expected per case, a text the error must contain besides "rank 1" (its type, say); absent: anything
     */
    public static void assertPromptFailures(Map<String, List<Outcome>> outcomes, Map<String, String> expected) {
        List<String> problems = new ArrayList<>();
        outcomes.forEach((c, per) -> {
            for (Outcome o : per) {
                System.out.println(c + ": " + o);
                String want = expected.getOrDefault(c, "");
                if (!o.failed()) {
                    problems.add(c + ": rank " + o.rank() + " returned instead of failing");
                } else if (o.afterMs() >= BOUND_MS) {
                    problems.add(c + ": rank " + o.rank() + " failed only " + o.afterMs() + " ms after the kill: "
                            + o.error());
                } else if (!o.error().contains("rank " + VICTIM) || !o.error().contains(want)) {
                    problems.add(c + ": rank " + o.rank() + "'s error does not name rank " + VICTIM
                            + (want.isEmpty() ? "" : " or lacks '" + want + "'") + ": " + o.error());
                }
            }
        });
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }
}
