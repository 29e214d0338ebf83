package dev.gdasync.libmp;

import dev.gdasync.libmp.bootstrap.EnvBootstrapTest;
import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.FailureChainMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A killed rank fails the whole job at once (real JVMs, EnvBootstrap, the software NIC): rank 0 waits for rank 1,
 * rank 1 for rank 2, rank 2 is killed with SIGKILL. Every survivor's wait fails with a message naming rank 2, long
 * before any timeout (the waits' and the bootstrap's are 60 s here), and the dead rank's shared memory is removed
 * by the survivors.
 */
@Timeout(120)
class FailFastTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /**
     * The bound this test holds the survivors to, from the kill to each one's failed wait. The design target is
     * under a second on one host (docs/failures.md); this test allows more for a loaded CI machine, and prints
     * what it measured.
     */
    private static final long BOUND_MS = Long.getLong("gdasync.failfast.bound.ms", 5_000);

    @TempDir
    Path base;

    @Test
    void aChainOfWaitsEndsAtOnceOnEveryRankWhenTheLastRankIsKilled() throws Exception {
        String rendezvous = "127.0.0.1:" + EnvBootstrapTest.freePort();
        List<ChildProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 3; r++) {
                ranks.add(ChildProcess.start("rank" + r,
                        ChildProcess.javaCommand(FailureChainMain.class, List.of(base.toString())),
                        Map.of("GDASYNC_RENDEZVOUS", rendezvous, "GDASYNC_SECRET", "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
                                "GDASYNC_RANK", "" + r, "GDASYNC_SIZE", "3", "GDASYNC_JOB_ID", "chain-" + ProcessHandle.current().pid(),
                                "GDASYNC_BOOTSTRAP_TIMEOUT_MS", "60000")));
            }
            for (ChildProcess p : ranks) {
                p.awaitLine(l -> l.equals("waiting"), WAIT);
            }
            Path victimDir = Path.of(ranks.get(2).awaitLine(l -> l.startsWith("dir "), WAIT).substring(4));
            assertTrue(Files.isDirectory(victimDir), victimDir.toString());

            long killedAt = System.nanoTime();
            ranks.get(2).kill();

            long worst = 0;
            for (int r = 0; r < 2; r++) {
                ChildProcess p = ranks.get(r);
                String line = p.awaitLine(l -> l.startsWith("FAILED ") || l.startsWith("UNEXPECTED") || l.startsWith("ERROR"),
                        WAIT);
                assertTrue(line.startsWith("FAILED "), p.describe());
                String[] parts = line.split(" ", 3);
                long ms = TimeUnit.NANOSECONDS.toMillis(Long.parseLong(parts[1]) - killedAt);
                worst = Math.max(worst, ms);
                System.out.println("rank " + r + " failed " + ms + " ms after rank 2 was killed: " + parts[2]);
                assertTrue(parts[2].contains("rank 2"), "the message names the rank that died: " + p.describe());
                assertEquals(1, p.awaitExit(WAIT), p.describe());
            }
            assertTrue(worst < BOUND_MS, "a survivor failed " + worst + " ms after the kill, bound " + BOUND_MS + " ms");
            assertFalse(Files.exists(victimDir), "the killed rank's shared memory is left at " + victimDir);
        } finally {
            ranks.forEach(ChildProcess::close);
        }
    }
}
