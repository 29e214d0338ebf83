package dev.gdasync.test.launchers;

import dev.gdasync.libmp.bootstrap.RendezvousPorts;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.test.harness.Command;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Slurm for real: {@code scripts/slurm-cluster} starts munged, slurmctld and two slurmd on this machine, each node a
 * network namespace of its own (its own address: the nodes reach each other over the bridge, so gdasync's ranks on
 * different nodes talk over UCX), and the tests run {@link LauncherJobMain} from the launcher jar through
 * {@code srun} and {@code sbatch}: 4 tasks on 2 nodes exchanging all-pairs, a batch script that runs srun twice, a
 * task killed with SIGKILL (the others end by gdasync's error naming it), the job cancelled with {@code scancel}
 * (every task ends), and {@code --cpu-bind} as the CPU share registry sees it. The cluster is stopped after the
 * class, failed or not. Skipped, saying which check failed, only where the daemons cannot run at all (not root, no
 * network namespaces, no packages and no apt-get).
 */
@Timeout(300)
class SlurmLaunchTest {
    static final Duration RUN = Duration.ofSeconds(120);
    static final String MAIN = LauncherJobMain.class.getName();
    /** Rank 0 runs on the first node, gdasync-node0, which is scripts/netns host 0. */
    static final String NODE0 = "10.77.0.10";
    static final Pattern OK = Pattern.compile("rank (\\d) of 4: \\d+ all-pairs rounds OK; cpus (\\S+); netns (\\S+)");
    static Path dir;
    static Path script;
    static String conf;
    static String classPath;

    @BeforeAll
    static void startTheCluster() throws IOException, URISyntaxException {
        script = Launchers.root().resolve("scripts/slurm-cluster");
        dir = Files.createTempDirectory("gdasync-slurm-");
        Command.Ran up = Command.run(List.of(script.toString(), "up", dir.toString()), Map.of(), Duration.ofSeconds(280));
        if (up.status() == 3) {
            System.out.println("SKIPPED (Slurm): " + up.err().strip());
        }
        assumeTrue(up.status() != 3, up.err());
        assertEquals(0, up.status(), "scripts/slurm-cluster up: " + up.describe() + "\n" + logs());
        conf = dir.resolve("slurm.conf").toString();
        Path jar = Path.of(System.getProperty("gdasync.launcher.jar", Launchers.root()
                .resolve("libmp/target/libmp-" + ProjectVersion.version() + "-launcher.jar").toString()));
        assertTrue(Files.isRegularFile(jar), "libmp's build makes the launcher jar " + jar);
        // The tasks run from the launcher jar alone (plus the test's job class), as a user's job does.
        classPath = jar + ":" + Path.of(LauncherJobMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @AfterAll
    static void stopTheCluster() {
        if (dir != null) {
            Command.Ran down = Command.run(List.of(script.toString(), "down", dir.toString()), Map.of(), Duration.ofSeconds(60));
            assertEquals(0, down.status(), down.describe());
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                System.out.println("could not remove " + dir + ": " + e);
            }
        }
    }

    @Test
    void fourTasksOnTwoNodesExchangeAllPairsOverUcx() {
        Command.Ran r = Command.run(srun(List.of("--nodes=2", "--ntasks=4"), "allpairs", "20"), env(), RUN);
        assertEquals(0, r.status(), r.describe());
        Map<Integer, String> netns = new HashMap<>();
        Matcher m = OK.matcher(r.out());
        while (m.find()) {
            netns.put(Integer.parseInt(m.group(1)), m.group(3));
        }
        assertEquals(4, netns.size(), "every task reports: " + r.describe());
        // Slurm's block distribution: tasks 0 and 1 on the first node, 2 and 3 on the second.
        assertEquals(netns.get(0), netns.get(1), r.describe());
        assertEquals(netns.get(2), netns.get(3), r.describe());
        assertNotEquals(netns.get(0), netns.get(2), "two nodes, two hosts: " + r.describe());
    }

    @Test
    void aBatchScriptRunsSrunTwice() throws Exception {
        Path out = dir.resolve("batch.out");
        Path batch = dir.resolve("batch.sh");
        int port = port();
        Files.writeString(batch, String.join("\n",
                "#!/bin/bash",
                "#SBATCH --nodes=2 --ntasks=4 --output=" + out,
                "set -e",
                "echo \"batch script on $SLURMD_NODENAME\"",
                // On a cluster $(hostname) names the first node; here every node has this machine's name, and its
                // own address.
                "host=$(hostname -I | cut -d' ' -f1)",
                "for port in " + port + " " + (port + 1) + "; do",
                "  GDASYNC_RENDEZVOUS=$host:$port srun " + String.join(" ", javaCommand("allpairs", "10")),
                "done", ""));
        Command.Ran submitted = Command.run(List.of("sbatch", "--parsable", batch.toString()), env(), RUN);
        assertEquals(0, submitted.status(), submitted.describe());
        String job = submitted.out().strip().split(";")[0];
        String state = awaitEnd(job);
        String printed = Files.readString(out);
        assertTrue(state.contains("JobState=COMPLETED") && state.contains("ExitCode=0:0"), state + "\n" + printed);
        assertTrue(printed.contains("batch script on gdasync-node0"), printed);
        for (int rank = 0; rank < 4; rank++) {
            Matcher m = Pattern.compile("rank " + rank + " of 4: 10 all-pairs rounds OK").matcher(printed);
            assertTrue(m.find() && m.find(), "both steps ran rank " + rank + ": " + printed);
        }
    }

    @Test
    void aTaskKilledWithSigkillEndsTheOthersWithGdasyncsErrorNamingIt() throws Exception {
        try (RunningLauncher srun = RunningLauncher.start(srun(List.of("--nodes=2", "--ntasks=4", "--label"), "wait", "3"), env())) {
            srun.awaitReady(4, RUN);
            long victim = labelledPid(srun.output(), 3);
            assertTrue(ProcessHandle.of(victim).orElseThrow().destroyForcibly());
            Command.Ran r = srun.finish(RUN);
            assertNotEquals(0, r.status(), r.describe());
            assertTrue(r.out().contains("task 3: Killed"), "srun reports the killed task: " + r.describe());
            for (int rank = 0; rank < 3; rank++) {
                Matcher m = Pattern.compile(rank + ": rank " + rank + " failed clearly: (.*)").matcher(r.out());
                assertTrue(m.find(), "rank " + rank + " ends by gdasync's error: " + r.describe());
                assertTrue(m.group(1).contains("receive from rank 3") && m.group(1).contains("process is gone"),
                        "the error names rank 3 and says its process is gone: " + r.describe());
            }
            Launchers.assertGone(Launchers.readyPids(r.out()), r.describe());
        }
    }

    @Test
    void scancelEndsEveryTaskOfTheJob() throws Exception {
        String name = "gdasync-cancel-" + ProcessHandle.current().pid();
        try (RunningLauncher srun = RunningLauncher.start(srun(List.of("--nodes=2", "--ntasks=4", "--label",
                "--job-name=" + name), "wait", "3"), env())) {
            List<Long> pids = srun.awaitReady(4, RUN);
            Command.Ran q = Command.run(List.of("squeue", "--noheader", "--format=%i", "--name=" + name), env(), RUN);
            String job = q.out().strip();
            assertTrue(job.matches("\\d+"), q.describe());
            Command.Ran cancel = Command.run(List.of("scancel", job), env(), RUN);
            assertEquals(0, cancel.status(), cancel.describe());
            Command.Ran r = srun.finish(RUN);
            assertNotEquals(0, r.status(), r.describe());
            assertTrue(r.out().contains("CANCELLED"), "Slurm says the job was cancelled: " + r.describe());
            Launchers.assertGone(pids, r.describe());
            assertTrue(awaitEnd(job).contains("JobState=CANCELLED"), r.describe());
        }
    }

    @Test
    void cpuBindingIsWhatTheCpuShareRegistrySees() {
        assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "binding two tasks to two CPUs needs two CPUs");
        // The reverse of Slurm's default order, so that the binding seen is the one asked for.
        Command.Ran r = Command.run(srun(List.of("--nodes=1", "--ntasks=2", "--cpu-bind=map_cpu:1,0"), "allpairs", "5"),
                env(), RUN);
        assertEquals(0, r.status(), r.describe());
        for (int rank = 0; rank < 2; rank++) {
            String cpu = rank == 0 ? "1" : "0";
            assertTrue(r.out().contains("rank " + rank + " of 2: 5 all-pairs rounds OK; cpus " + cpu + ";"), r.describe());
            assertTrue(Pattern.compile("rank " + rank + " cpu share: .* on 1 allowed CPU \\(" + cpu + "\\)").matcher(r.out()).find(),
                    "the CPU share registry sees rank " + rank + " bound to CPU " + cpu + ": " + r.describe());
        }
    }

    @Test
    void anUnmodifiedMpjExpressProgramRunsOverGdasyncOnTwoNodes() {
        // One task per node: the ping-pong's messages cross over UCX.
        List<String> cmd = new ArrayList<>(List.of("srun", "--nodes=2", "--ntasks=2", Command.java(),
                "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(Launchers.mpjPingPong("Slurm"));
        Command.Ran r = Command.run(cmd, env(), RUN);
        Launchers.assertMpjPingPongRan(r.status(), r.out(), r.describe());
    }

    private static List<String> srun(List<String> options, String... jobArgs) {
        List<String> cmd = new ArrayList<>(List.of("srun"));
        cmd.addAll(options);
        cmd.addAll(javaCommand(jobArgs));
        return cmd;
    }

    private static List<String> javaCommand(String... jobArgs) {
        List<String> cmd = new ArrayList<>(List.of(Command.java(), "--enable-native-access=ALL-UNNAMED", "-cp", classPath, MAIN));
        cmd.addAll(List.of(jobArgs));
        return cmd;
    }

    /** Slurm forwards the whole environment to the tasks: the cluster's configuration, the rendezvous, the secret. */
    private static Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("SLURM_CONF", conf);
        env.put("GDASYNC_RENDEZVOUS", NODE0 + ":" + port());
        env.put("GDASYNC_SECRET", HexFormat.of().formatHex(new SecureRandom().generateSeed(32)));
        return env;
    }

    /** @return a port free here, and so in the nodes' fresh namespaces, where nothing else listens */
    private static int port() {
        return RendezvousPorts.pick(InetAddress.getLoopbackAddress());
    }

    /** @return the pid that task {@code rank} printed as {@code RANK: ready PID} (srun --label) */
    private static long labelledPid(String output, int rank) {
        Matcher m = Pattern.compile("(?m)^" + rank + ": ready (\\d+)").matcher(output);
        assertTrue(m.find(), "task " + rank + " printed its pid: " + output);
        return Long.parseLong(m.group(1));
    }

    /** @return scontrol's line for the job once it has ended (its state neither pending nor running) */
    private static String awaitEnd(String job) throws InterruptedException {
        long end = System.nanoTime() + RUN.toNanos();
        String line = "";
        while (System.nanoTime() < end) {
            line = Command.run(List.of("scontrol", "--oneliner", "show", "job", job), env(), RUN).out();
            if (!line.contains("JobState=PENDING") && !line.contains("JobState=RUNNING")
                    && !line.contains("JobState=CONFIGURING") && !line.contains("JobState=COMPLETING")
                    && line.contains("JobState=")) {
                return line;
            }
            Thread.sleep(200);
        }
        fail("job " + job + " did not end within " + RUN.toSeconds() + " s: " + line);
        return line;
    }

    /** @return the ends of the daemons' logs, for a failure message */
    private static String logs() {
        StringBuilder b = new StringBuilder();
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".log")).toList()) {
                List<String> lines = Files.readAllLines(f);
                b.append("--- ").append(f).append('\n')
                        .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 10), lines.size()))).append('\n');
            }
        } catch (IOException e) {
            b.append("(no logs: ").append(e).append(")");
        }
        return b.toString();
    }
}
