package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import dev.gdasync.libmp.testutil.CollRankMain;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static dev.gdasync.libmp.launch.MpRunTest.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mprun --proxies}: real rank JVMs and a real proxy JVM; offloaded collectives, a killed rank, a killed proxy;
 * and the host engine's collectives between ranks in two network namespaces (skipped with a printed reason where
 * namespaces cannot be made).
 */
@Timeout(120)
class MpRunProxiesTest {
    /** The ranks' program, by main class (a short name would change the launcher tests' list of known names). */
    private static final String COLL_RANK = CollRankMain.class.getName();

    @Test
    void collectivesRunOffloadedUnderTheProxy() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", "--proxies", COLL_RANK, "check")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int r = 0; r < 3; r++) {
                assertTrue(mprun.stdout().contains("[" + r + "] offloaded true"), mprun.describe());
                assertTrue(mprun.stdout().contains("[" + r + "] collectives ok"), mprun.describe());
            }
        }
    }

    @Test
    void hostEngineCollectivesAcrossNetworkNamespaces() {
        NetnsLaunchTest.assumeNetns();
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "3", COLL_RANK, "check")) {
            assertEquals(0, mprun.awaitExit(WAIT.multipliedBy(2)), mprun.describe());
            for (int r = 0; r < 3; r++) {
                assertTrue(mprun.stdout().contains("[" + r + "] offloaded false"), mprun.describe());
                assertTrue(mprun.stdout().contains("[" + r + "] collectives ok"), mprun.describe());
            }
        }
    }

    @Test
    void offloadedCollectivesAcrossNetworkNamespaces() {
        NetnsLaunchTest.assumeNetns();
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "4", "--proxies", COLL_RANK, "check")) {
            assertEquals(0, mprun.awaitExit(WAIT.multipliedBy(2)), mprun.describe());
            for (int r = 0; r < 4; r++) {
                assertTrue(mprun.stdout().contains("[" + r + "] offloaded true"), mprun.describe());
                assertTrue(mprun.stdout().contains("[" + r + "] collectives ok"), mprun.describe());
            }
            // Each host's proxy wrote into the other host's ranks (over the network transport between namespaces).
            for (int h = 0; h < 2; h++) {
                int host = h;
                String line = mprun.stdout().stream().filter(l -> l.startsWith("[proxy h" + host + "] host ")).findFirst()
                        .orElseThrow(() -> new AssertionError("no summary from the proxy of host " + host + "\n"
                                + mprun.describe()));
                assertTrue(line.matches(".*: [1-9][0-9]* transfers, [1-9][0-9]* of them into ranks of other hosts, [0-9]+"
                        + " shared-memory buffers filled for ranks"), line);
            }
        }
    }

    /**
     * The correctness matrix between processes on one host and across two network-namespace hosts, on both engines
     * (host, then offloaded): 2, 3, 5 and 8 ranks, blocks of 1 B to 4 MiB. Minutes on two CPUs, so only with
     * {@code -Dgdasync.coll.bigTests=true}.
     */
    @Test
    @Timeout(3600)
    void theMatrixOnOneHostAndAcrossNetworkNamespacesOnBothEngines() {
        if (!Boolean.getBoolean("gdasync.coll.bigTests")) {
            System.out.println("MpRunProxiesTest: skipping the 2-8 rank x 1 B-4 MiB matrix (one host and two namespaces):"
                    + " run with -Dgdasync.coll.bigTests=true");
        }
        Assumptions.assumeTrue(Boolean.getBoolean("gdasync.coll.bigTests"), "big tests off");
        runMatrix(1);
        NetnsLaunchTest.assumeNetns();
        runMatrix(2);
    }

    private static void runMatrix(int hosts) {
        for (boolean offload : new boolean[] {false, true}) {
            for (int np : new int[] {2, 3, 5, 8}) {
                List<String> args = new java.util.ArrayList<>(List.of("-np", Integer.toString(np)));
                if (hosts > 1) {
                    args.addAll(List.of("--netns", Integer.toString(hosts)));
                }
                if (offload) {
                    args.add("--proxies");
                }
                args.addAll(List.of(COLL_RANK, "matrix"));
                try (ChildProcess mprun = MpRunProcess.start(args.toArray(String[]::new))) {
                    assertEquals(0, mprun.awaitExit(WAIT.multipliedBy(20)), mprun.describe());
                    for (int r = 0; r < np; r++) {
                        assertTrue(mprun.stdout().contains("[" + r + "] offloaded " + offload), mprun.describe());
                        assertTrue(mprun.stdout().contains("[" + r + "] collectives ok"), mprun.describe());
                    }
                    System.out.println("MpRunProxiesTest: matrix on " + hosts + " host(s), " + (offload ? "offload" : "host")
                            + " engine, " + np + " ranks: every rank exact");
                }
            }
        }
    }

    @Test
    void aKilledProxyFailsThePendingCollectivesOnEveryHost() throws Exception {
        NetnsLaunchTest.assumeNetns();
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "4", "--grace", "12", "--proxies",
                COLL_RANK, "victim", "1")) {
            List<Long> victim = MpRunTest.readyPids(mprun, 1);
            String line = mprun.awaitLine(l -> l.startsWith("[3] proxy "), WAIT.multipliedBy(2));
            long pid = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
            for (int r : new int[] {0, 2, 3}) {
                mprun.awaitLine(l -> l.startsWith("[" + r + "] posted "), WAIT);
            }
            ProcessHandle.of(pid).orElseThrow().destroyForcibly(); // host 1's proxy
            String own = mprun.awaitLine(l -> l.startsWith("[3] failed: "), WAIT);
            assertTrue(own.contains("the collective proxy (pid " + pid + ") is gone"), own);
            for (int r : new int[] {0, 2}) {
                String failed = mprun.awaitLine(l -> l.startsWith("[" + r + "] failed: "), WAIT);
                assertTrue(failed.contains("ialltoall #0 on communicator 0") && failed.contains("the collective proxy of host 1"),
                        failed);
            }
            ProcessHandle.of(victim.getFirst()).ifPresent(ProcessHandle::destroyForcibly); // no need to wait for the grace
            assertNotEquals(0, mprun.awaitExit(WAIT), mprun.describe());
        }
    }

    @Test
    void aKilledRankFailsThePendingCollectiveOfTheOthers() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("-np", "3", "--grace", "30", "--proxies", COLL_RANK, "victim", "1")) {
            List<Long> victim = MpRunTest.readyPids(mprun, 1);
            mprun.awaitLine(l -> l.startsWith("[0] posted "), WAIT);
            mprun.awaitLine(l -> l.startsWith("[2] posted "), WAIT);
            ProcessHandle.of(victim.getFirst()).orElseThrow().destroyForcibly();
            for (int r : new int[] {0, 2}) {
                String line = mprun.awaitLine(l -> l.startsWith("[" + r + "] failed: "), WAIT);
                // One host: the offload engine's shared-memory path (the proxy helps; the ranks see the death).
                assertTrue(line.contains("alltoall of 100000 bytes per rank (#0 on communicator 0, rank " + r + " of 3)")
                        && line.contains("rank 1"), line);
            }
            assertNotEquals(0, mprun.awaitExit(WAIT), mprun.describe());
        }
    }

    @Test
    void aKilledProxyFailsThePendingCollective() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "2", "--grace", "1", "--proxies", COLL_RANK, "proxykill")) {
            String line = mprun.awaitLine(l -> l.startsWith("[0] proxy "), WAIT);
            long pid = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
            mprun.awaitLine(l -> l.startsWith("[0] posted "), WAIT);
            ProcessHandle.of(pid).orElseThrow().destroyForcibly();
            String failed = mprun.awaitLine(l -> l.startsWith("[0] failed: "), WAIT);
            assertTrue(failed.contains("the collective proxy (pid " + pid + ") is gone"), failed);
            assertNotEquals(0, mprun.awaitExit(WAIT), mprun.describe());
        }
    }

    @Test
    void offloadWithoutAProxyIsRefusedPrecisely() {
        try (ChildProcess mprun = MpRunProcess.start("-np", "1", COLL_RANK, "noproxy")) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            assertTrue(mprun.stdout().contains("[0] refused: offloaded collectives need a collective proxy, and this job has"
                    + " none: GDASYNC_COLL_PROXY is not set (start the job with scripts/mprun --proxies)"), mprun.describe());
        }
    }
}
