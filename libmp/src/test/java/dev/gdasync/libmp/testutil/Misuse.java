package dev.gdasync.libmp.testutil;

import dev.gdasync.gdsync.testutil.ChildProcess;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * A rank's side of a misuse suite between real processes: each case makes a call the layer must refuse and prints
 * one line, {@code OK CASE MS} when the call threw the expected type with exactly the expected message within
 * {@link #BOUND}, or {@code BAD CASE: WHY} otherwise (a hang shows as a missing line: the test's own deadline).
 * Checks after the call (canaries unchanged, the layer still usable) are the case's {@link Check}s; all of them
 * run (they may be collective), and any problem makes the case BAD. The test asserts every OK line and no BAD one.
 */
public final class Misuse {
    /**
     * Only separates "fails promptly" from "waits for a timeout" (the layers' timeouts are 30 s and more in these
     * suites): far above what a refusal costs even on a loaded machine.
     */
    public static final Duration BOUND = Duration.ofSeconds(5);

    /**
     * An expected message ending with this is a prefix: the rest describes a moment's state (what each thread block
     * of an MSCCL program waits for), not the refusal.
     */
    public static final String PREFIX = " ...";

    private final List<String> bad = new ArrayList<>();
    private int ok;

    /** A call the layer must refuse. */
    @FunctionalInterface
    public interface Call {
        /**
         * @throws Exception what the layer threw
         */
        void call() throws Exception;
    }

    /** A check after a refused call: returns a problem, or null. */
    @FunctionalInterface
    public interface Check extends Supplier<String> {
    }

    /**
     * Runs one case.
     *
     * @param name    the case's name (no spaces)
     * @param type    the exception the layer must throw
     * @param message its exact message (or its start, ending with {@link #PREFIX}), or null to print it only (when
     *                writing a new case)
     * @param call    the call
     * @param checks  what must hold afterwards
     */
    public void expect(String name, Class<? extends Throwable> type, String message, Call call, Check... checks) {
        long t0 = System.nanoTime();
        Throwable thrown = null;
        try {
            call.call();
        } catch (Throwable e) {
            thrown = e;
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        String problem;
        if (thrown == null) {
            problem = "the call succeeded";
        } else if (!type.isInstance(thrown)) {
            problem = "threw " + KilledMidCall.describe(thrown) + ", expected a " + type.getSimpleName();
        } else if (message != null && !(message.endsWith(PREFIX) ? String.valueOf(thrown.getMessage())
                .startsWith(message.substring(0, message.length() - PREFIX.length())) : message.equals(thrown.getMessage()))) {
            problem = "message\n    '" + thrown.getMessage() + "'\n  expected\n    '" + message + "'";
        } else if (ms >= BOUND.toMillis()) {
            problem = "refused only after " + ms + " ms";
        } else {
            problem = null;
        }
        for (Check c : checks) { // every check runs, whatever came before: they may be collective
            String p = c.get();
            problem = problem == null ? p : problem;
        }
        if (problem == null && message == null) {
            problem = "no expected message yet; it threw: " + thrown.getMessage();
        }
        if (problem == null) {
            ok++;
            System.out.println("OK " + name + " " + ms);
        } else {
            bad.add(name);
            System.out.println("BAD " + name + ": " + problem);
        }
        System.out.flush();
    }

    /** @return the number of cases that passed */
    public int ok() {
        return ok;
    }

    /**
     * The test's side: runs the launcher with a suite's rank main, prints every case's line, and asserts that every
     * rank ran {@code cases} cases, all OK.
     *
     * @param cases    how many cases each rank runs
     * @param ranks    the number of ranks
     * @param mprunArgs the launcher's arguments
     */
    public static void runSuite(int cases, int ranks, String... mprunArgs) {
        try (ChildProcess mprun = MpRunProcess.start(mprunArgs)) {
            int status = mprun.awaitExit(Duration.ofSeconds(150));
            mprun.stdout().stream().filter(l -> l.contains("] OK ") || l.contains("] BAD ") || l.contains("] DONE "))
                    .forEach(System.out::println);
            for (int r = 0; r < ranks; r++) {
                String done = "[" + r + "] DONE " + cases + " 0";
                org.junit.jupiter.api.Assertions.assertTrue(mprun.stdout().contains(done),
                        "missing '" + done + "': " + mprun.describe());
            }
            org.junit.jupiter.api.Assertions.assertEquals(0, status, mprun.describe());
        }
    }

    /** Prints the summary line the tests look for: {@code DONE OK BAD}. */
    public void done() {
        System.out.println("DONE " + ok + " " + bad.size() + (bad.isEmpty() ? "" : " " + bad));
        System.out.flush();
    }
}
