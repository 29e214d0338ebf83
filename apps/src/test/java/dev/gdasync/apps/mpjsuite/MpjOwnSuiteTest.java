package dev.gdasync.apps.mpjsuite;

import dev.gdasync.apps.testutil.Launcher;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MPJ Express's own test suite (its TestSuite's cases, compiled unmodified by {@code ensure_mpj_tests}) over gdasync on
 * 2 ranks: every case that passes on MPJ's own multicore device passes over gdasync. Skipped, saying why, when MPJ
 * Express or the suite is not there (no network when scripts/test ran). {@code scripts/mpj-suite} runs the whole
 * suite on both devices.
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

    @Test
    void everyCaseThatPassesOnMpjsOwnDevicePassesOverGdasyncOnTwoRanks() throws Exception {
        String mpjHome = Launcher.mpjHome();
        Path classes = suiteClasses();
        List<String> cases = new ArrayList<>(TestSuiteCases.forRanks(2));
        cases.removeAll(FAIL_ON_MPJS_OWN_DEVICE.keySet());
        long start = System.nanoTime();
        List<SuiteRun.Verdict> verdicts = new SuiteRun(SuiteRun.Device.GDASYNC, 2, Duration.ofSeconds(30), classes,
                mpjHome).onVerdict(v -> {
                    if (v.outcome() != SuiteRun.Outcome.PASS) {
                        System.out.println("MpjOwnSuiteTest: " + v);
                    }
                }).run(cases);
        System.out.printf("MpjOwnSuiteTest: %s cases pass over gdasync on 2 ranks (%d s; %d left out: they fail on MPJ's"
                + " multicore device too)%n", SuiteRun.passCount(verdicts), (System.nanoTime() - start) / 1_000_000_000L,
                FAIL_ON_MPJS_OWN_DEVICE.size());
        List<String> failed = verdicts.stream().filter(v -> v.outcome() != SuiteRun.Outcome.PASS)
                .map(v -> v.name() + " " + v.outcome() + ": " + v.why()).toList();
        assertTrue(failed.isEmpty(), "cases that pass on MPJ's multicore device but not over gdasync:\n"
                + String.join("\n", failed));
        assertEquals(cases.size(), verdicts.size());
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
