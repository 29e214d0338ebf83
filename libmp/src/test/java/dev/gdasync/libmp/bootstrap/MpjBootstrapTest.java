package dev.gdasync.libmp.bootstrap;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpjRankMain;
import dev.gdasync.libmp.testutil.RankMain;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MpjBootstrap under MPJ Express's multicore device (ranks are threads of one JVM), started with MPJ's
 * own starter.jar. MPJ_HOME comes from the environment ({@code scripts/test} exports it) or from the
 * {@code gdasync.mpj.home} system property the build sets; without MPJ Express the test is skipped
 * with the reason.
 */
@Timeout(120)
class MpjBootstrapTest {

    static Path mpjHome() {
        String home = System.getenv("MPJ_HOME");
        if (home == null || home.isBlank()) {
            home = System.getProperty("gdasync.mpj.home");
        }
        Path starter = home == null ? null : Path.of(home, "lib", "starter.jar");
        if (starter == null || !Files.isRegularFile(starter)) {
            String reason = "MPJ Express is not installed (no " + (starter == null ? "MPJ_HOME" : starter)
                    + "): scripts/test installs it (ensure_mpj in scripts/lib/common.sh)";
            System.out.println("MpjBootstrapTest skipped: " + reason);
            Assumptions.abort(reason);
        }
        return Path.of(home);
    }

    @Test
    void twoRanksUnderTheMulticoreDevice() {
        Path home = mpjHome();
        // MPJ's own jars come from MPJ_HOME; its starter runs `java` from PATH, so this JDK goes first.
        String cp = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.contains("thirdparty" + File.separator + "mpj"))
                .collect(Collectors.joining(File.pathSeparator));
        String javaBin = Path.of(ChildProcess.java()).getParent().toString();
        List<String> cmd = new ArrayList<>(List.of(ChildProcess.java(), "-jar", home.resolve("lib/starter.jar").toString(),
                "-np", "2", "-dev", "multicore", "-cp", cp, MpjRankMain.class.getName()));
        try (ChildProcess mpj = ChildProcess.start("mpjrun", cmd,
                Map.of("MPJ_HOME", home.toString(), "PATH", javaBin + File.pathSeparator + System.getenv("PATH")))) {
            // MPJ's starter exits with 0 even when a rank fails: the ranks' output is what counts.
            mpj.awaitExit(Duration.ofSeconds(60));
            String expected = "gathered [" + RankMain.summary(RankMain.contribution(0)) + ", "
                    + RankMain.summary(RankMain.contribution(1)) + "] empty 0";
            String job = null;
            for (int r = 0; r < 2; r++) {
                int rank = r;
                String line = mpj.stdout().stream().filter(l -> l.startsWith("mpj rank " + rank + " of 2 job ")).findFirst()
                        .orElseThrow(() -> new AssertionError("no line from rank " + rank + ": " + mpj.describe()));
                String[] words = line.split(" ");
                job = job == null ? words[6] : job;
                assertEquals(job, words[6], mpj.describe());
                assertTrue(line.endsWith(expected), mpj.describe());
                assertTrue(mpj.stdout().contains("mpj done " + r), mpj.describe());
            }
            assertTrue(job.matches("mpj-[0-9a-f]{16}"), job);
        }
    }
}
