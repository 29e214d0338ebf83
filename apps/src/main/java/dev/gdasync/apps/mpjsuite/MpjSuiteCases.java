package dev.gdasync.apps.mpjsuite;

import mpi.MPI;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The rank side of {@code scripts/mpj-suite}: runs cases of MPJ Express's own test suite (the classes of its
 * {@code test/} folder, compiled unmodified) one after the other in this rank, as the suite's {@code TestSuite} does:
 * each case's constructor takes {@code MPI.Init}'s arguments and calls {@code MPI.Init} and {@code MPI.Finalize}
 * itself (a case with no such constructor, in the folders TestSuite does not run, has its {@code main} run instead;
 * the mpiJava micro-benchmarks get their {@code ITERATIONS} and {@code SIZE} properties, 10 and 65536, unless set).
 * It runs under either device: over gdasync ({@code mprun --mpj}, one JVM per rank) and under MPJ's starter with its
 * multicore device (one thread per rank). Every rank prints, per case,
 * <pre>
 * SUITE-BEGIN RANK CASE
 * SUITE-PASS RANK CASE MILLIS        the constructor returned
 * SUITE-FAIL RANK CASE: WHY          it threw, or called System.exit; the JVM then ends (MPI's state is unknown)
 * SUITE-TIMEOUT RANK CASE SECONDS    it ran longer than the timeout; the JVM halts
 * </pre>
 * and {@code SUITE-DONE RANK} after the last. {@link SuiteRun} reads these lines and starts the next job after a case
 * that ended one. The case {@value #INIT_LOOP} is {@code TestSuite.main}'s own first step, which is no class of the
 * suite: {@code MPI.Init}, {@code Rank}, {@code Size}, {@code Barrier} and {@code MPI.Finalize}, ten times.
 *
 * <pre>MAIN RANK CONF DEVICE [--timeout SECONDS] CASE...     (MPJ's three arguments first, as every MPJ program)</pre>
 */
public final class MpjSuiteCases {
    /** The name of TestSuite's ten MPI.Init/MPI.Finalize rounds. */
    public static final String INIT_LOOP = "TestSuite.initFinalizeTenTimes";
    /** The exit status of a rank after a failed case. */
    static final int FAILED = 3;
    /** The exit status of a rank after a case ran out of time. */
    static final int TIMED_OUT = 4;

    private final String rank;
    private final String[] mpjArgs;
    private final long timeoutMillis;
    /** The case running now, or null: what the shutdown hook names when a case calls System.exit. */
    private final AtomicReference<String> running = new AtomicReference<>();

    private MpjSuiteCases(String[] mpjArgs, long timeoutMillis) {
        this.rank = mpjArgs[0].strip();
        this.mpjArgs = mpjArgs;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * @param args MPJ's three arguments (rank, configuration, device), then {@code [--timeout SECONDS] CASE...}
     */
    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("MpjSuiteCases: run it as an MPJ program: RANK CONF DEVICE [--timeout SECONDS] CASE...");
            System.exit(2);
        }
        long timeout = 60_000;
        List<String> cases = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            if (args[i].equals("--timeout") && i + 1 < args.length) {
                timeout = Math.round(Double.parseDouble(args[++i]) * 1000);
            } else {
                cases.add(args[i]);
            }
        }
        // The mpiJava micro-benchmarks read their iterations and message size from system properties.
        if (System.getProperty("ITERATIONS") == null) {
            System.setProperty("ITERATIONS", "10");
        }
        if (System.getProperty("SIZE") == null) {
            System.setProperty("SIZE", "65536");
        }
        new MpjSuiteCases(Arrays.copyOf(args, 3), timeout).runAll(cases);
    }

    private void runAll(List<String> cases) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            String c = running.get();
            if (c != null) {
                say("SUITE-FAIL " + rank + " " + c + ": the case ended the JVM (System.exit) before it returned");
            }
        }));
        for (String c : cases) {
            say("SUITE-BEGIN " + rank + " " + c);
            running.set(c);
            Thread watchdog = watchdog(c);
            long start = System.nanoTime();
            try {
                runOne(c);
            } catch (Throwable t) {
                running.set(null);
                say("SUITE-FAIL " + rank + " " + c + ": " + why(t));
                // MPI's state is unknown and the other ranks may wait for this one: end the job (under MPJ's
                // multicore device the ranks are threads of this JVM, so the whole JVM ends).
                Runtime.getRuntime().halt(FAILED);
            }
            running.set(null);
            watchdog.interrupt();
            say("SUITE-PASS " + rank + " " + c + " " + (System.nanoTime() - start) / 1_000_000);
        }
        say("SUITE-DONE " + rank);
    }

    /**
     * Runs one case: its constructor with {@code MPI.Init}'s arguments, as {@code TestSuite} does. The suite's cases
     * are not known at compile time (they are fetched and compiled by {@code ensure_mpj_tests}), so the class is
     * found by name and its constructor (or main) called reflectively: the one place, to run an external suite's cases
     * unmodified.
     */
    private void runOne(String name) throws Throwable {
        if (name.equals(INIT_LOOP)) {
            for (int y = 0; y < 10; y++) {
                MPI.Init(mpjArgs.clone());
                MPI.COMM_WORLD.Rank();
                MPI.COMM_WORLD.Size();
                MPI.COMM_WORLD.Barrier();
                MPI.Finalize();
            }
            return;
        }
        Class<?> c = Class.forName(name, true, MpjSuiteCases.class.getClassLoader());
        try {
            Constructor<?> k;
            try {
                k = c.getConstructor(String[].class);
            } catch (NoSuchMethodException e) {
                // A case of the folders TestSuite does not run that has only a main (in a class that may not be
                // public): run as java would run it.
                Method main = c.getDeclaredMethod("main", String[].class);
                main.setAccessible(true);
                main.invoke(null, (Object) mpjArgs.clone());
                return;
            }
            k.newInstance((Object) mpjArgs.clone());
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** A thread that halts the JVM if the case is still running after the timeout. */
    private Thread watchdog(String c) {
        return Thread.ofPlatform().daemon().name("mpj-suite-watchdog").start(() -> {
            try {
                Thread.sleep(timeoutMillis);
            } catch (InterruptedException e) {
                return;
            }
            if (c.equals(running.get())) {
                running.set(null);
                say("SUITE-TIMEOUT " + rank + " " + c + " " + timeoutMillis / 1000.0);
                Runtime.getRuntime().halt(TIMED_OUT);
            }
        });
    }

    /** @return the innermost cause's first line: what went wrong, without MPJ's wrappers */
    static String why(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String s = root.toString();
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static void say(String line) {
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }
}
