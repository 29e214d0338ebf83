package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mprun --netns K}: ranks in different network namespaces ("hosts") meet through the environment
 * bootstrap over the bridge, and failures still stop every rank. Needs root and {@code ip netns}; skipped
 * with a printed reason elsewhere.
 */
@Timeout(180)
class NetnsLaunchTest {

    private static String skip;
    private static boolean checked;

    /**
     * Skips the calling test, printing why, unless the namespaces of two hosts can be made (checked once
     * per test JVM: root, the ip command, and {@code scripts/netns up 2}).
     */
    static synchronized void assumeNetns() {
        if (!checked) {
            checked = true;
            if (NetNamespaces.effectiveUid() != 0) {
                skip = "not root (uid " + NetNamespaces.effectiveUid() + ")";
            } else if (NetNamespaces.onPath("ip").isEmpty()) {
                skip = "no ip command";
            } else {
                try {
                    NetNamespaces.ensureUp(2);
                } catch (IllegalStateException e) {
                    skip = e.getMessage();
                }
            }
        }
        if (skip != null) {
            System.out.println("SKIPPED (network namespaces): " + skip);
            Assumptions.abort("network namespaces cannot be used here: " + skip);
        }
    }

    @BeforeEach
    void namespaces() {
        assumeNetns();
    }

    @Test
    void ranksRunInTheirNamespacesAndMeetOverTheBridge() throws Exception {
        String root = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "3", "testrank", "netns")) {
            assertEquals(0, mprun.awaitExit(MpRunTest.WAIT), mprun.describe());
            List<String> out = mprun.stdout();
            String all = null;
            for (int r = 0; r < 3; r++) {
                String prefix = "[" + r + "] netns ";
                String line = out.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
                assertTrue(line != null, "rank " + r + " gathered: " + mprun.describe());
                String list = line.substring(prefix.length());
                assertTrue(all == null || all.equals(list), "every rank gathered the same: " + mprun.describe());
                all = list;
                assertTrue(out.contains("[" + r + "] done"), mprun.describe());
            }
            // "[gdasync-h0 net:[A], gdasync-h1 net:[B], gdasync-h0 net:[A]]": rank r on host r % 2.
            String[] entries = all.substring(1, all.length() - 1).split(", ");
            assertEquals(3, entries.length, all);
            List<String> inodes = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                String[] parts = entries[r].split(" ");
                assertEquals("gdasync-h" + (r % 2), parts[0], all);
                inodes.add(parts[1]);
            }
            assertNotEquals(inodes.get(0), inodes.get(1), "hosts 0 and 1 are different namespaces: " + all);
            assertEquals(inodes.get(0), inodes.get(2), "ranks 0 and 2 share host 0: " + all);
            assertTrue(!inodes.contains(root), "no rank runs in the launcher's namespace " + root + ": " + all);
        }
    }

    @Test
    void theRanksAreTheLaunchersChildrenAndAKilledOneFailsTheJob() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "3", "testrank", "victim", "1")) {
            List<Long> pids = MpRunTest.readyPids(mprun, 0, 1, 2);
            long launcher = mprun.process().pid();
            for (long pid : pids) {
                // ip netns exec (and setpriv) exec the JVM: stopping the launcher's child stops the rank.
                assertEquals(launcher, ProcessHandle.of(pid).orElseThrow().parent().orElseThrow().pid(),
                        "rank process " + pid + " is the launcher's child: " + mprun.describe());
            }
            assertTrue(ProcessHandle.of(pids.get(1)).orElseThrow().destroyForcibly());
            assertEquals(137, mprun.awaitExit(MpRunTest.WAIT), mprun.describe());
            assertTrue(mprun.stderr().contains("mprun: rank 1 was killed by SIGKILL (exit status 137)"), mprun.describe());
            for (int r : new int[]{0, 2}) {
                String prefix = "[" + r + "] failed: rank " + r + " of job mprun-";
                assertTrue(mprun.stdout().stream().anyMatch(l -> l.startsWith(prefix) && l.contains(": rank 1's process is gone")),
                        mprun.describe());
            }
            MpRunTest.assertAllGone(pids, mprun.describe());
        }
    }

    @Test
    void aFailedRankGetsTheOthersInOtherNamespacesKilled() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "2", "--grace", "0.5", "testrank",
                "exit", "1", "3")) {
            List<Long> others = MpRunTest.readyPids(mprun, 0);
            assertEquals(3, mprun.awaitExit(MpRunTest.WAIT), mprun.describe());
            assertTrue(mprun.stderr().contains("mprun: stopped rank 0 (still running 0.5 s after rank 1 failed)"), mprun.describe());
            MpRunTest.assertAllGone(others, mprun.describe());
        }
    }

    @Test
    void sigtermToTheLauncherStopsTheRanksInNamespaces() throws Exception {
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "2", "testrank", "hang")) {
            List<Long> ranks = MpRunTest.readyPids(mprun, 0, 1);
            assertTrue(mprun.process().toHandle().destroy());
            assertNotEquals(0, mprun.awaitExit(MpRunTest.WAIT), mprun.describe());
            MpRunTest.assertAllGone(ranks, mprun.describe());
        }
    }

    @Test
    void sigkillToTheLauncherStillEndsTheRanksInNamespaces() throws Exception {
        Assumptions.assumeFalse(ParentDeath.prefix().isEmpty(), "no setpriv with --pdeathsig on this machine");
        try (ChildProcess mprun = MpRunProcess.start("--netns", "2", "-np", "2", "testrank", "hang")) {
            List<Long> ranks = MpRunTest.readyPids(mprun, 0, 1);
            mprun.process().toHandle().destroyForcibly();
            assertEquals(137, mprun.awaitExit(MpRunTest.WAIT), mprun.describe());
            MpRunTest.assertAllGone(ranks, mprun.describe());
        }
    }
}
