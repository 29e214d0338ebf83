package dev.gdasync.apps.mpjsuite;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.ucx.UcxLibrary;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MPJ Express's own test suite (its TestSuite's cases, compiled unmodified by {@code ensure_mpj_tests}) over gdasync on
 * 2 ranks: every case that passes on MPJ's own multicore device passes over gdasync, on one host and with the ranks on
 * two "hosts" (network namespaces, UCX between them), and so do the cases of the suite's folders TestSuite does not
 * run. Skipped, saying why, when MPJ Express or the suite is not there
 * (no network when scripts/test ran), and the run between hosts where network namespaces or UCX cannot be used.
 * {@code scripts/mpj-suite} runs the whole suite on both devices.
 */
@Timeout(240)
public class MpjOwnSuiteTest {
    /**
     * The cases that fail on MPJ Express's own multicore device too (2 ranks), with MPJ's reason: not run here
     * (docs/mpj.md, "MPJ Express's own test suite").
     */
    static final Map<String, String> FAIL_ON_MPJS_OWN_DEVICE = Map.of(
            "mpi.topo.dimscreate", "MPJ's Cartcomm.Dims_create overwrites a dimension the caller fixed: (2, 0) for 6"
                    + " ranks becomes (3, 2), not (2, 3)");

    /**
     * The cases of the suite's folders TestSuite does not run ({@code beyond-testsuite-cases.txt}) that fail on MPJ
     * Express's own multicore device too (2 ranks), with the reason: not run here.
     */
    static final Map<String, String> BEYOND_FAIL_ON_MPJS_OWN_DEVICE = Map.of(
            "mpi.signals.SendTest_Conv2", "serializing its linked list overflows the stack (StackOverflowError)",
            "microbenchmarkmpiJava.reducescatter.Reduce_scatter", "its receive counts are those of 10 ranks whatever the"
                    + " job's size, more elements than its arrays hold (ArrayIndexOutOfBoundsException)");

    @Test
    void everyCaseThatPassesOnMpjsOwnDevicePassesOverGdasyncOnTwoRanks() throws Exception {
        runAllButMpjsOwnFailures(new SuiteRun(SuiteRun.Device.GDASYNC, 2, Duration.ofSeconds(30), suiteClasses(),
                Launcher.mpjHome()), "on 2 ranks", TestSuiteCases.forRanks(2), FAIL_ON_MPJS_OWN_DEVICE);
    }

    /**
     * The cases of the folders TestSuite does not run: several threads of a rank calling MPJ at once, objects
     * serialized by the case, MPJ's own latency and collective loops, the Java Grande benchmarks of size A (which check
     * their results) and the mpiJava micro-benchmarks. About 15 s.
     */
    @Test
    void everyCaseBeyondTestSuiteThatPassesOnMpjsOwnDevicePassesOverGdasyncOnTwoRanks() throws Exception {
        runAllButMpjsOwnFailures(new SuiteRun(SuiteRun.Device.GDASYNC, 2, Duration.ofSeconds(30), suiteClasses(),
                Launcher.mpjHome()), "on 2 ranks (the folders TestSuite does not run)", TestSuiteCases.beyond(2),
                BEYOND_FAIL_ON_MPJS_OWN_DEVICE);
    }

    /**
     * The same cases with the 2 ranks on 2 "hosts" ({@code mprun --netns 2}), so every message goes over UCX, and over
     * TCP on the hosts' veth link ({@code UCX_TLS=tcp}; left to itself UCX finds shared memory between namespaces of
     * one machine, which {@code MpjCrossHostTest} runs). About 20 s. Skipped, saying why, where network namespaces
     * (root, {@code ip}, {@code scripts/netns up 2}) or UCX are missing.
     */
    @Test
    void everyCaseThatPassesOnMpjsOwnDevicePassesBetweenTwoHostsOverUcxTcp() throws Exception {
        Path classes = suiteClasses();
        String noHosts = noTwoHosts();
        if (noHosts != null) {
            skip(noHosts);
        }
        SuiteRun twoHosts = new SuiteRun(SuiteRun.Device.GDASYNC, 2, Duration.ofSeconds(30), classes,
                Launcher.mpjHome()).netns(2).environment(Map.of("UCX_TLS", "tcp"));
        runAllButMpjsOwnFailures(twoHosts, "on 2 ranks on 2 hosts over UCX/TCP", TestSuiteCases.forRanks(2),
                FAIL_ON_MPJS_OWN_DEVICE);
    }

    /** Runs every case but those that fail on MPJ's own device too, and fails naming each case that did not pass. */
    private static void runAllButMpjsOwnFailures(SuiteRun run, String where, List<String> all,
                                                 Map<String, String> failOnMpjsOwnDevice) throws Exception {
        List<String> cases = new ArrayList<>(all);
        assertTrue(cases.containsAll(failOnMpjsOwnDevice.keySet()), "the cases left out are cases of the list");
        cases.removeAll(failOnMpjsOwnDevice.keySet());
        long start = System.nanoTime();
        List<SuiteRun.Verdict> verdicts = run.onVerdict(v -> {
            if (v.outcome() != SuiteRun.Outcome.PASS) {
                System.out.println("MpjOwnSuiteTest: " + v);
            }
        }).run(cases);
        System.out.printf("MpjOwnSuiteTest: %s cases pass over gdasync %s (%d s; %d left out: they fail on MPJ's"
                + " multicore device too)%n", SuiteRun.passCount(verdicts), where,
                (System.nanoTime() - start) / 1_000_000_000L, failOnMpjsOwnDevice.size());
        List<String> failed = verdicts.stream().filter(v -> v.outcome() != SuiteRun.Outcome.PASS)
                .map(v -> v.name() + " " + v.outcome() + ": " + v.why()).toList();
        assertTrue(failed.isEmpty(), "cases that pass on MPJ's multicore device but not over gdasync " + where + ":\n"
                + String.join("\n", failed));
        assertEquals(cases.size(), verdicts.size());
    }

    /**
     * @return why 2 network namespaces cannot carry a job here (not root, no ip command, no scripts/netns, its
     *         {@code up 2} failed, no UCX), or null when they can
     */
    private static String noTwoHosts() throws Exception {
        Optional<String> noUcx = UcxLibrary.unavailableReason();
        if (noUcx.isPresent()) {
            return "no UCX for the ranks on different hosts: " + noUcx.get();
        }
        String uid = Files.readAllLines(Path.of("/proc/self/status")).stream().filter(l -> l.startsWith("Uid:"))
                .map(l -> l.substring(4).strip().split("\\s+")[1]).findFirst().orElse("unknown");
        if (!uid.equals("0")) {
            return "network namespaces need root, and the test runs as uid " + uid;
        }
        Path script = null;
        for (Path dir = Path.of("").toAbsolutePath(); dir != null && script == null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("scripts/netns"))) {
                script = dir.resolve("scripts/netns");
            }
        }
        if (script == null) {
            return "no scripts/netns above " + Path.of("").toAbsolutePath();
        }
        // What mprun --netns 2 runs first: it needs the ip command and makes (or keeps) the namespaces.
        Process up = new ProcessBuilder("bash", script.toString(), "up", "2").redirectErrorStream(true).start();
        up.getOutputStream().close();
        String said = new String(up.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!up.waitFor(60, TimeUnit.SECONDS)) {
            up.destroyForcibly();
            return "'scripts/netns up 2' did not finish in 60 s";
        }
        return up.exitValue() == 0 ? null : "'scripts/netns up 2' failed (exit status " + up.exitValue() + "): " + said;
    }

    /** @return the suite's classes; skips the test, saying why, when MPJ Express or the suite is missing */
    private static Path suiteClasses() {
        if (Launcher.mpjHome() == null) {
            skip("MPJ Express is not installed (scripts/test installs it: ensure_mpj in scripts/lib/common.sh)");
        }
        String tests = System.getenv("GDASYNC_MPJ_TESTS");
        if (tests == null) {
            tests = System.getProperty("gdasync.mpj.tests");
        }
        Path classes = tests == null ? null : Path.of(tests, "classes");
        if (classes == null || !Files.isRegularFile(classes.resolve("TestSuite.class"))) {
            skip("MPJ Express's test suite is not compiled (no " + classes + "/TestSuite.class): scripts/test fetches it"
                    + " with ensure_mpj_tests (scripts/lib/common.sh), which needs the network once");
        }
        return classes;
    }

    private static void skip(String reason) {
        System.out.println("MpjOwnSuiteTest skipped: " + reason);
        Assumptions.abort(reason);
    }
}
