package dev.gdasync.libmp.testutil;

import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What the tests of MPJ Express programs over gdasync share: MPJ_HOME, and the check of their output. */
public final class MpjPrograms {
    private MpjPrograms() {
    }

    /**
     * @param who the test, for the skip message
     * @return the environment the launcher needs for {@code --mpj} (MPJ_HOME); skips the test, printing why, when MPJ
     *         Express is not installed
     */
    public static Map<String, String> mpjEnvOrSkip(String who) {
        String home = System.getenv("MPJ_HOME");
        if (home == null || home.isBlank()) {
            home = System.getProperty("gdasync.mpj.home");
        }
        if (home == null || !Files.isRegularFile(Path.of(home, "lib", "mpj.jar"))) {
            String reason = "MPJ Express is not installed (no " + home + "/lib/mpj.jar): scripts/test installs it "
                    + "(ensure_mpj in scripts/lib/common.sh)";
            System.out.println(who + " skipped: " + reason);
            Assumptions.abort(reason);
        }
        return Map.of("MPJ_HOME", home);
    }

    /**
     * @param launcher a finished launcher of the conformance program
     * @param ranks    how many ranks it ran
     * @param cases    the cases every rank must have passed
     * @return what is wrong (a FAIL line, a case or the final line missing), empty when nothing is
     */
    public static List<String> conformanceProblems(ChildProcess launcher, int ranks, List<String> cases) {
        List<String> problems = new ArrayList<>();
        for (String line : launcher.stdout()) {
            if (line.contains("FAIL ")) {
                problems.add(line);
            }
        }
        for (int r = 0; r < ranks; r++) {
            for (String c : cases) {
                if (!launcher.stdout().contains("[" + r + "] OK " + c)) {
                    problems.add("missing '[" + r + "] OK " + c + "'");
                }
            }
            if (!launcher.stdout().contains("[" + r + "] DONE rank " + r + " of " + ranks)) {
                problems.add("missing '[" + r + "] DONE rank " + r + " of " + ranks + "'");
            }
        }
        return problems;
    }
}
