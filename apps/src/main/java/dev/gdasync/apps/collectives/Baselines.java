package dev.gdasync.apps.collectives;

import dev.gdasync.apps.common.ChildJob;
import dev.gdasync.apps.common.MpjStarter;
import dev.gdasync.apps.common.RootHeartbeat;
import dev.gdasync.libmp.bootstrap.Bootstrap;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The benchmark's baselines, MPJ Express ({@link MpjCollBench}) and Open MPI ({@link OmpiCollBench}), run by rank 0
 * as child jobs with as many ranks as the gdasync job, one after the other, after the gdasync methods. Meanwhile the
 * other gdasync ranks wait for rank 0's heartbeats ({@link RootHeartbeat}): they block in a socket read, so the
 * baselines' ranks have the CPUs, and nothing waits long enough to time out.
 * A baseline that cannot run here is left out with the reason; one that fails (a wrong result, a failed job) is
 * reported and fails the run, the other rows are still reported.
 */
final class Baselines {
    private static final long HEARTBEAT_MILLIS = 500;

    private final Bootstrap boot;
    private final int ranks;

    /**
     * @param boot  the job's bootstrap
     * @param ranks the ranks of the gdasync job
     */
    Baselines(Bootstrap boot, int ranks) {
        this.boot = boot;
        this.ranks = ranks;
    }

    /**
     * Runs the baselines asked for (a collective: every rank calls it).
     *
     * @param mpj   whether to run MPJ Express
     * @param ompi  whether to run Open MPI
     * @param reps  timed reps per case
     * @param warmupSeconds how long MPJ Express's warm-up passes last at least (Open MPI's C needs none)
     * @param cases the cases
     * @param rows  where rank 0 adds the rows
     * @return whether every baseline that ran passed its checks
     */
    boolean run(boolean mpj, boolean ompi, int reps, double warmupSeconds, List<BenchCase> cases, List<BenchRow> rows)
            throws InterruptedException {
        RootHeartbeat rootHeartbeat = new RootHeartbeat(boot, "collectives");
        if (boot.rank() != 0) {
            // Rank 0 runs the baselines.
            rootHeartbeat.awaitEnd();
            return true;
        }
        Runnable heartbeat = rootHeartbeat::beat;
        try {
            return runMpj(mpj, reps, warmupSeconds, cases, rows, heartbeat) & runOmpi(ompi, reps, cases, rows, heartbeat);
        } finally {
            rootHeartbeat.end();
        }
    }

    private boolean runMpj(boolean mpj, int reps, double warmupSeconds, List<BenchCase> cases, List<BenchRow> rows,
                           Runnable heartbeat)
            throws InterruptedException {
        if (!mpj) {
            say("the MPJ Express baseline is left out (--no-mpj)");
            return true;
        }
        String home = System.getenv(MpjStarter.MPJ_HOME);
        String missing = MpjStarter.missing(home);
        if (missing != null) {
            say("the MPJ Express baseline is left out: " + missing);
            return true;
        }
        try {
            for (String line : MpjStarter.job("the MPJ Express baseline", home, ranks, MpjCollBench.class.getName(),
                    MpjCollBench.args(reps, warmupSeconds, cases), MpjCollBench.RESULT, MpjCollBench.ERROR)
                    .echo(ChildJob.Echo.prefixed("mpj: ")).run(heartbeat)) {
                rows.add(BenchRow.fromChild("mpj", ranks, line));
            }
            return true;
        } catch (IOException | IllegalStateException e) {
            say("MPJ EXPRESS BASELINE FAILED: " + e.getMessage());
            return false;
        }
    }

    private boolean runOmpi(boolean ompi, int reps, List<BenchCase> cases, List<BenchRow> rows, Runnable heartbeat)
            throws InterruptedException {
        if (!ompi) {
            return true;
        }
        // mpicc's first build may take longer than the others' bootstrap waits: beat meanwhile.
        CompletableFuture<OmpiCollBench> found = CompletableFuture.supplyAsync(OmpiCollBench::find,
                r -> Thread.ofPlatform().daemon().name("collectives-ompi-build").start(r));
        OmpiCollBench bench = null;
        while (bench == null) {
            try {
                bench = found.get(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                heartbeat.run();
            } catch (ExecutionException e) {
                say("the Open MPI baseline is left out: " + e.getCause().getMessage() + " ("
                        + OmpiCollBench.INSTALL_HINT + ")");
                return true;
            }
        }
        say(bench.describe(ranks));
        try {
            rows.addAll(bench.run(ranks, reps, cases, heartbeat));
            return true;
        } catch (IOException | IllegalStateException e) {
            say("OPEN MPI BASELINE FAILED: " + e.getMessage());
            return false;
        }
    }

    private static void say(String line) {
        System.out.println("collectives: " + line);
    }
}
