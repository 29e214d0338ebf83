package dev.gdasync.libmp.bootstrap;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.RankMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * EnvBootstrap between real JVMs started with the variables of each launcher it supports: the gdasync
 * launcher's, Slurm's and Open MPI's.
 */
@Timeout(120)
class EnvBootstrapProcessTest {
    static final Duration WAIT = Duration.ofSeconds(60);
    static final String SECRET = "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf";

    final String rendezvous = "127.0.0.1:" + EnvBootstrapTest.freePort();

    static Map<String, String> env(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    Map<String, String> common(String secret) {
        return env("GDASYNC_RENDEZVOUS", rendezvous, "GDASYNC_SECRET", secret, "GDASYNC_BOOTSTRAP_TIMEOUT_MS", "30000");
    }

    static List<ChildProcess> startRanks(int n, IntFunction<Map<String, String>> envOf, List<String> args) {
        List<ChildProcess> ranks = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            ranks.add(ChildProcess.start("rank" + r, ChildProcess.javaCommand(RankMain.class, args), envOf.apply(r)));
        }
        return ranks;
    }

    static void closeAll(List<ChildProcess> ranks) {
        ranks.forEach(ChildProcess::close);
    }

    /** Every rank printed the same job id and every rank's contribution, and exited with 0. */
    static String checkGathered(List<ChildProcess> ranks, String source) {
        int n = ranks.size();
        List<String> expected = new ArrayList<>();
        for (int q = 0; q < n; q++) {
            expected.add(RankMain.summary(RankMain.contribution(q)));
        }
        String job = null;
        for (int r = 0; r < n; r++) {
            ChildProcess p = ranks.get(r);
            assertEquals(0, p.awaitExit(WAIT), p.describe());
            List<String> out = p.stdout();
            String joined = out.getFirst();
            assertTrue(joined.startsWith("joined rank " + r + " size " + n + " job ") && joined.endsWith(" source " + source),
                    p.describe());
            String id = joined.split(" ")[6];
            if (job == null) {
                job = id;
            }
            assertEquals(job, id, "job ids differ: " + p.describe());
            assertEquals("gathered " + expected, out.get(1), p.describe());
            assertEquals("done " + n, out.get(2), p.describe());
            // (rank 0 may also have logged the connections it refused)
            assertTrue(p.stderr().contains("stderr of rank " + r), p.describe());
        }
        assertTrue(JobIds.isValid(job));
        return job;
    }

    @Test
    void twoRanksWithTheLaunchersVariables() {
        List<ChildProcess> ranks = startRanks(2, r -> {
            Map<String, String> e = common(SECRET);
            e.putAll(env("GDASYNC_RANK", "" + r, "GDASYNC_SIZE", "2", "GDASYNC_JOB_ID", "launcher-test"));
            return e;
        }, List.of("gather"));
        try {
            assertEquals("launcher-test", checkGathered(ranks, "the gdasync launcher"));
        } finally {
            closeAll(ranks);
        }
    }

    @Test
    void fourRanksWithSlurmsVariablesWhileAnImpostorIsRefused() {
        // A process with the wrong secret tries to join as rank 1 first; it is refused, the real ranks meet.
        Map<String, String> impostorEnv = env("GDASYNC_RENDEZVOUS", rendezvous, "GDASYNC_SECRET", SECRET.replace('a', 'b'),
                "GDASYNC_BOOTSTRAP_TIMEOUT_MS", "2000", "SLURM_PROCID", "1", "SLURM_NTASKS", "4",
                "SLURM_JOB_ID", "777", "SLURM_STEP_ID", "0");
        try (ChildProcess impostor = ChildProcess.start("impostor",
                ChildProcess.javaCommand(RankMain.class, List.of("gather")), impostorEnv)) {
            List<ChildProcess> ranks = startRanks(4, r -> {
                Map<String, String> e = common(SECRET);
                e.putAll(env("SLURM_PROCID", "" + r, "SLURM_NTASKS", "4", "SLURM_JOB_ID", "777", "SLURM_STEP_ID", "0"));
                return e;
            }, List.of("gather"));
            try {
                assertEquals("slurm-777.0", checkGathered(ranks, "Slurm"));
            } finally {
                closeAll(ranks);
            }
            assertEquals(1, impostor.awaitExit(WAIT), impostor.describe());
            String failed = impostor.stdout().getLast();
            assertTrue(failed.startsWith("failed: rank 1 of job slurm-777.0: could not join rank 0 at " + rendezvous
                    + " within 2000 ms:"), impostor.describe());
        }
    }

    @Test
    void twoRanksWithOpenMpisVariables() {
        List<ChildProcess> ranks = startRanks(2, r -> {
            Map<String, String> e = common(SECRET);
            e.putAll(env("OMPI_COMM_WORLD_RANK", "" + r, "OMPI_COMM_WORLD_SIZE", "2", "OMPI_MCA_ess_base_jobid", "31337"));
            return e;
        }, List.of("gather"));
        try {
            assertEquals("ompi-31337", checkGathered(ranks, "Open MPI's mpirun"));
        } finally {
            closeAll(ranks);
        }
    }

    @Test
    void aKilledRankMakesTheOthersFailWithinTheTimeout() {
        List<ChildProcess> ranks = startRanks(3, r -> {
            Map<String, String> e = common(SECRET);
            e.putAll(env("GDASYNC_RANK", "" + r, "GDASYNC_SIZE", "3", "GDASYNC_JOB_ID", "kill-test"));
            return e;
        }, List.of("victim", "2"));
        try {
            for (ChildProcess p : ranks) {
                p.awaitLine(l -> l.startsWith("ready "), WAIT);
            }
            long t0 = System.nanoTime();
            ranks.get(2).kill();
            for (int r = 0; r < 2; r++) {
                ChildProcess p = ranks.get(r);
                assertEquals(1, p.awaitExit(WAIT), p.describe());
                String failed = p.stdout().getLast();
                String expected = r == 0
                        ? "failed: rank 0 of job kill-test: rank 2's process is gone"
                        : "failed: rank 1 of job kill-test: barrier #1 failed: rank 2's process is gone";
                assertTrue(failed.startsWith(expected), p.describe());
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 30_000, "the survivors failed after " + ms + " ms, not within the 30 s timeout");
        } finally {
            closeAll(ranks);
        }
    }
}
