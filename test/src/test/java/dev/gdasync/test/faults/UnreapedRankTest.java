package dev.gdasync.test.faults;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.bootstrap.RendezvousPorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A killed rank that its parent has not reaped yet (a zombie: dead, its memory and sockets gone, its pid still
 * listed) is dead to the job: the survivor fails at once (the bootstrap sees the connection end), and removes the
 * dead rank's shared memory when it closes, as it does for a reaped one.
 *
 * <p>The fault-injection suite ({@link KillDuringTrafficTest}) found the killed rank's directory left behind once in
 * 100 kills at 4 ranks, when the survivors closed before the test JVM had reaped the victim; here the victim runs
 * under a parent that never reaps it, so the window stays open.
 */
@Timeout(120)
class UnreapedRankTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path base;

    @Test
    void aKilledRankNotYetReapedIsDeadToTheSurvivorsAndItsSharedMemoryIsRemoved() throws Exception {
        String rendezvous = "127.0.0.1:" + RendezvousPorts.pick(InetAddress.getLoopbackAddress());
        byte[] secret = new byte[16];
        ThreadLocalRandom.current().nextBytes(secret);
        String job = "unreaped-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffff_ffffL);
        List<ChildProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                Map<String, String> env = Map.of("GDASYNC_RENDEZVOUS", rendezvous, "GDASYNC_SECRET",
                        HexFormat.of().formatHex(secret), "GDASYNC_RANK", Integer.toString(r), "GDASYNC_SIZE", "2",
                        "GDASYNC_JOB_ID", job, "GDASYNC_BOOTSTRAP_TIMEOUT_MS", "60000");
                List<String> args = List.of("host", base.toString());
                List<String> rank = ChildProcess.javaCommand(AllPairsRankMain.class, args);
                ranks.add(r == 0 ? AllPairsRankMain.start("survivor", rank, env)
                        : AllPairsRankMain.start("victim", underUnreapingParent(rank), env));
            }
            for (ChildProcess r : ranks) {
                assertEquals("traffic", r.awaitLine(l -> l.equals("traffic") || l.startsWith("ERROR"), WAIT), r.describe());
            }
            ChildProcess victim = ranks.get(1);
            Path victimDir = Path.of(victim.awaitLine(l -> l.startsWith("dir "), WAIT).substring(4));
            ProcessHandle victimJvm = victim.process().toHandle().children().findFirst()
                    .orElseThrow(() -> new IllegalStateException("no JVM under the victim's parent " + victim.pid()));
            assertTrue(victimDir.getFileName().toString().startsWith("p" + victimJvm.pid() + "-"),
                    "the victim's JVM is pid " + victimJvm.pid() + ", its directory " + victimDir);

            victimJvm.destroyForcibly();
            ChildProcess survivor = ranks.get(0);
            String failed = survivor.awaitLine(l -> l.startsWith("FAILED ") || l.startsWith("ERROR"), WAIT);
            assertTrue(failed.startsWith("FAILED ") && failed.contains("rank 1"), survivor.describe());
            assertEquals(1, survivor.awaitExit(WAIT), survivor.describe());

            String state = procState(victimJvm.pid());
            System.out.println("UnreapedRankTest: the survivor failed (" + failed.split(" ", 3)[2] + ") and exited; the"
                    + " victim's process state: " + state);
            assertEquals("Z", state, "the victim should be a zombie now (dead, not reaped)");
            assertFalse(Files.exists(victimDir), "the killed rank's shared memory is left at " + victimDir
                    + ": its process is dead (a zombie, state Z) but not reaped, and the survivor took it for alive");
        } finally {
            ranks.forEach(ChildProcess::close);
        }
    }

    /**
     * A command that runs {@code command} as the child of a process that never reaps it ({@code sh} that backgrounds
     * it and then becomes {@code sleep}): once it dies it stays a zombie until that parent ends. Its standard input and
     * output are the parent's; closing the child process ends the parent (the zombie goes to init then).
     */
    private static List<String> underUnreapingParent(List<String> command) {
        List<String> cmd = new ArrayList<>(List.of("sh", "-c",
                // fd 3 carries stdin past the shell's /dev/null for background jobs.
                "exec 3<&0; \"$@\" <&3 3<&- & exec sleep 600 3<&-", "sh"));
        cmd.addAll(command);
        return cmd;
    }

    /** @return the process's state letter from {@code /proc/<pid>/stat}, or "gone" */
    private static String procState(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
        } catch (java.io.IOException e) {
            return "gone";
        }
    }
}
