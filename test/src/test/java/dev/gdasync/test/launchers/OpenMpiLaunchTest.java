package dev.gdasync.test.launchers;

import dev.gdasync.libmp.bootstrap.RendezvousPorts;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.test.harness.Command;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Open MPI's real {@code mpirun} starts gdasync jobs: the tasks read {@code OMPI_COMM_WORLD_RANK} and
 * {@code OMPI_COMM_WORLD_SIZE} that mpirun gives them, meet at the rendezvous forwarded with {@code -x}, and run
 * {@link LauncherJobMain}'s all-pairs exchange; from the project's class path with {@code --oversubscribe} (4 tasks
 * on this machine's CPUs), and from the launcher jar alone with {@code --bind-to core}, whose binding the CPU share
 * registry reports. A task that exits non-zero ends the job: with mpirun's default abort, and with the abort turned
 * off, where the other tasks end by gdasync's own error naming the rank. An unmodified MPJ Express program (the MPJ
 * ping-pong, validated) runs over gdasync through {@code MpjMain} under mpirun. Skipped, saying so, where mpirun is not
 * installed (scripts/lib/common.sh installs Debian's openmpi-bin as root).
 */
@Timeout(300)
class OpenMpiLaunchTest {
    static final Duration RUN = Duration.ofSeconds(120);
    static final String MAIN = LauncherJobMain.class.getName();
    static String mpirun;

    @BeforeAll
    static void openMpiIsInstalled() {
        mpirun = Launchers.onPath("mpirun");
        if (mpirun == null) {
            System.out.println("SKIPPED (Open MPI): mpirun is not on PATH (install Debian's openmpi-bin)");
        }
        assumeTrue(mpirun != null, "mpirun is not on PATH");
    }

    @Test
    void fourOversubscribedTasksRunTheAllPairsJobFromTheProjectClassPath() {
        Command.Ran r = mpirun(List.of("--oversubscribe", "-np", "4"),
                List.of("-cp", System.getProperty("java.class.path"), MAIN, "allpairs", "20"));
        assertEquals(0, r.status(), r.describe());
        for (int rank = 0; rank < 4; rank++) {
            assertTrue(r.out().contains("rank " + rank + " of 4: 20 all-pairs rounds OK"), r.describe());
            assertTrue(r.out().contains("rank " + rank + " cpu share: "), r.describe());
        }
    }

    @Test
    void tasksBoundToCoresRunFromTheLauncherJarAndTheCpuShareSeesTheirBinding() throws URISyntaxException {
        assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "binding two tasks to two cores needs two CPUs");
        Path jar = Path.of(System.getProperty("gdasync.launcher.jar", Launchers.root()
                .resolve("libmp/target/libmp-" + ProjectVersion.version() + "-launcher.jar").toString()));
        assertTrue(Files.isRegularFile(jar), "libmp's build makes the launcher jar " + jar);
        Path testClasses = Path.of(LauncherJobMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Command.Ran r = mpirun(List.of("-np", "2", "--bind-to", "core", "--map-by", "core"),
                List.of("-cp", jar + ":" + testClasses, MAIN, "allpairs", "20"));
        assertEquals(0, r.status(), r.describe());
        Set<String> cpus = new HashSet<>();
        for (int rank = 0; rank < 2; rank++) {
            Matcher m = Pattern.compile("rank " + rank + " of 2: 20 all-pairs rounds OK; cpus (\\S+);").matcher(r.out());
            assertTrue(m.find(), r.describe());
            String cpu = m.group(1);
            assertTrue(cpu.matches("\\d+"), "mpirun --bind-to core gives rank " + rank + " one CPU: " + r.describe());
            cpus.add(cpu);
            assertTrue(r.out().contains("rank " + rank + " cpu share: ") && Pattern.compile("rank " + rank
                    + " cpu share: .* on 1 allowed CPU \\(" + cpu + "\\)").matcher(r.out()).find(),
                    "the CPU share registry sees rank " + rank + "'s binding to CPU " + cpu + ": " + r.describe());
        }
        assertEquals(2, cpus.size(), "two cores, one each: " + r.describe());
    }

    @Test
    void aTaskExitingNonZeroEndsTheJobAndMpirunNamesIt() throws InterruptedException {
        Command.Ran r = mpirun(List.of("--oversubscribe", "-np", "3"), List.of("-cp", System.getProperty("java.class.path"),
                MAIN, "quit", "1"));
        assertNotEquals(0, r.status(), r.describe());
        assertTrue(r.out().contains("rank 1 quits with status 3"), r.describe());
        assertTrue(r.err().contains("exited with non-zero status") || r.out().contains("exited with non-zero status"),
                "mpirun says that a process exited non-zero: " + r.describe());
        // The others end, either by gdasync's error (which names rank 1) or by mpirun's abort, whichever comes first.
        Matcher m = Pattern.compile("rank (\\d) failed clearly: (.*)").matcher(r.out());
        while (m.find()) {
            assertTrue(m.group(2).contains("rank 1"), "gdasync's error names the rank that quit: " + r.describe());
        }
        Launchers.assertGone(Launchers.readyPids(r.out()), r.describe());
    }

    @Test
    void withMpirunsAbortOffTheOtherTasksEndByGdasyncsErrorNamingTheRank() throws InterruptedException {
        Command.Ran r = mpirun(List.of("--oversubscribe", "-np", "3", "--mca", "orte_abort_on_non_zero_status", "0"),
                List.of("-cp", System.getProperty("java.class.path"), MAIN, "quit", "1"));
        // Open MPI 4.1 then exits 0 whatever the tasks' statuses (docs/getting-started.md says so): their output tells.
        assertTrue(r.out().contains("rank 1 quits with status 3"), r.describe());
        for (int rank : new int[] {0, 2}) {
            Matcher m = Pattern.compile("rank " + rank + " failed clearly: (.*)").matcher(r.out());
            assertTrue(m.find(), "rank " + rank + " ends by gdasync's error: " + r.describe());
            assertTrue(m.group(1).contains("receive from rank 1") && m.group(1).contains("process is gone"),
                    "the error names rank 1 and says its process is gone: " + r.describe());
        }
        Launchers.assertGone(Launchers.readyPids(r.out()), r.describe());
    }

    @Test
    void anUnmodifiedMpjExpressProgramRunsOverGdasyncUnderMpirun() {
        Command.Ran r = mpirun(List.of("--oversubscribe", "-np", "2"), Launchers.mpjPingPong("Open MPI"));
        Launchers.assertMpjPingPongRan(r.status(), r.out(), r.describe());
    }

    /** Runs mpirun with the given options, forwarding the rendezvous and the secret, on java with the given arguments. */
    private static Command.Ran mpirun(List<String> options, List<String> javaArgs) {
        List<String> cmd = new ArrayList<>(List.of(mpirun));
        cmd.addAll(options);
        cmd.addAll(List.of("-x", "GDASYNC_RENDEZVOUS", "-x", "GDASYNC_SECRET", Command.java(), "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(javaArgs);
        Map<String, String> env = new HashMap<>();
        env.put("GDASYNC_RENDEZVOUS", "127.0.0.1:" + RendezvousPorts.pick(InetAddress.getLoopbackAddress()));
        env.put("GDASYNC_SECRET", HexFormat.of().formatHex(new SecureRandom().generateSeed(32)));
        // mpirun refuses root unless told: CI runs as root.
        env.put("OMPI_ALLOW_RUN_AS_ROOT", "1");
        env.put("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        return Command.run(cmd, env, RUN);
    }
}
