package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * libmp between "hosts": ranks in different network namespaces ({@code mprun --netns}), whose software NICs
 * reach each other over UCX (the default transport, auto, uses UCX between hosts and shared memory within
 * one); and the faults a network brings: a killed rank, a cut link, loss and delay. Needs root and
 * {@code ip netns}, and UCX; skipped with a printed reason elsewhere.
 */
@Timeout(240)
class CrossHostTest {

    @BeforeEach
    void hosts() {
        NetnsLaunchTest.assumeNetns();
        java.util.Optional<String> noUcx = dev.gdasync.gdsync.ucx.UcxLibrary.unavailableReason();
        noUcx.ifPresent(r -> System.out.println("SKIPPED (UCX): " + r));
        assumeTrue(noUcx.isEmpty(), noUcx.orElse(""));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void everyCallWorksBetweenRanksOnTwoHosts(int ranks) {
        // With 4 ranks, 0 and 2 share host 0 and 1 and 3 host 1: both transports in one job.
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", String.valueOf(ranks), "mpexercise",
                "exercise")) {
            assertEquals(0, mprun.awaitExit(MpRunTest.WAIT.multipliedBy(2)), mprun.describe());
            for (int r = 0; r < ranks; r++) {
                String ok = "[" + r + "] OK rank " + r + " of " + ranks;
                assertTrue(mprun.stdout().contains(ok), "missing '" + ok + "': " + mprun.describe());
            }
        }
    }

    @Test
    void aRankKilledOnAnotherHostFailsTheOthersRequestsClearly() throws Exception {
        killedRankFailsTheOthersClearly(java.util.Map.of());
    }

    /**
     * The same over TCP: UCX then sees the killed rank's connections reset and calls the endpoints' error handler
     * within the survivors' worker progress. That handler was JUCX's, whose JNI {@code FindClass} finds nothing
     * from an FFM downcall, so the survivors died of a SIGSEGV (hs_err_pid files) instead of failing clearly.
     */
    @Test
    void aRankKilledOnAnotherHostOverTcpFailsTheOthersRequestsClearly() throws Exception {
        killedRankFailsTheOthersClearly(java.util.Map.of("UCX_TLS", "tcp"));
    }

    private static void killedRankFailsTheOthersClearly(java.util.Map<String, String> env) throws Exception {
        try (ChildProcess mprun = MpRunProcess.start(env, "--netns", "2", "-np", "3", "--grace", "20", "mpexercise",
                "victim", "1")) {
            List<Long> pids = MpRunTest.readyPids(mprun, 0, 1, 2);
            long t0 = System.nanoTime();
            assertTrue(ProcessHandle.of(pids.get(1)).orElseThrow().destroyForcibly());
            int status = mprun.awaitExit(MpRunTest.WAIT);
            long seconds = (System.nanoTime() - t0) / 1_000_000_000L;
            assertTrue(status != 0, "the launcher must fail: " + mprun.describe());
            for (int r : new int[] {0, 2}) {
                String prefix = "[" + r + "] failed clearly after ";
                assertTrue(mprun.stdout().stream().anyMatch(l -> l.startsWith(prefix) && l.contains("receive from rank 1")
                        && l.contains("process is gone")), "rank " + r + " must name the dead peer: " + mprun.describe());
            }
            assertTrue(seconds < 20, "the survivors failed within the grace period: " + seconds + " s");
            MpRunTest.assertAllGone(pids, mprun.describe());
        }
    }

    @Test
    void aLinkCutMidTransferFailsBothSidesWithinTheTimeout() throws Exception {
        // Two namespaces of one machine share memory, which UCX prefers to the network: UCX_TLS=tcp makes the ranks
        // talk over the link, as hosts do. Requests unanswered, and links silent, for the receiver-not-ready
        // timeout (here 3 s) fail.
        List<String> args = new java.util.ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC", "--netns", "2", "-np", "2",
                "--grace", "30", "--jvm-opt", "-Dgdasync.swnic.rnr.timeout.ms=3000", "mpexercise", "traffic", "120"));
        try (ChildProcess mprun = ChildProcess.start("mprun", ChildProcess.javaCommand(MpRun.class, args),
                java.util.Map.of("GDASYNC_BOOTSTRAP_TIMEOUT_MS", "30000", "UCX_TLS", "tcp"))) {
            List<Long> pids = MpRunTest.readyPids(mprun, 0, 1);
            netns("cut", "1");
            try {
                int status = mprun.awaitExit(MpRunTest.WAIT);
                assertTrue(status != 0, "the launcher must fail: " + mprun.describe());
                for (int r : new int[] {0, 1}) {
                    String prefix = "[" + r + "] failed clearly after ";
                    assertTrue(mprun.stdout().stream().anyMatch(l -> l.startsWith(prefix)
                            && l.contains("did not answer over UCX")), "rank " + r + " must fail clearly: " + mprun.describe());
                }
                assertTrue(mprun.stdout().stream().noneMatch(l -> l.contains("is wrong")), "no payload corrupted: "
                        + mprun.describe());
                MpRunTest.assertAllGone(pids, mprun.describe());
            } finally {
                netns("restore", "1");
            }
        }
    }

    @Test
    void lossAndDelayOnTheLinkCorruptNothing() throws Exception {
        String device = "gdasync-v1";
        Process probe = new ProcessBuilder("tc", "qdisc", "add", "dev", device, "root", "netem", "delay", "2ms", "loss", "2%")
                .redirectErrorStream(true).start();
        String said = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!probe.waitFor(10, TimeUnit.SECONDS) || probe.exitValue() != 0) {
            System.out.println("SKIPPED (tc netem): cannot add loss and delay to " + device + ": " + said
                    + " (the kernel lacks sch_netem, or tc is missing)");
            assumeTrue(false, "tc netem unavailable: " + said);
        }
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "2", "mpexercise", "exercise")) {
            assertEquals(0, mprun.awaitExit(MpRunTest.WAIT.multipliedBy(3)), mprun.describe());
            assertTrue(mprun.stdout().contains("[0] OK rank 0 of 2") && mprun.stdout().contains("[1] OK rank 1 of 2"),
                    mprun.describe());
        } finally {
            new ProcessBuilder("tc", "qdisc", "del", "dev", device, "root").start().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static void netns(String... args) throws IOException, InterruptedException {
        Path script = NetNamespaces.script().orElseThrow();
        List<String> command = new java.util.ArrayList<>(List.of("bash", script.toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", command) + ": " + out);
    }
}
