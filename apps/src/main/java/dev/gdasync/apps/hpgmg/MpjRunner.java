package dev.gdasync.apps.hpgmg;

import dev.gdasync.apps.common.ChildJob;
import dev.gdasync.apps.common.MpjStarter;
import dev.gdasync.apps.common.RootHeartbeat;
import dev.gdasync.libmp.bootstrap.Bootstrap;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code mpj}: rank 0 runs {@link MpjHpgmg} with as many MPJ Express ranks as the job has, under MPJ's starter
 * ({@link MpjStarter}) as a child job, as the pingpong app's mpj mode does; the other gdasync ranks keep pace with
 * rank 0's heartbeat ({@link RootHeartbeat}) and stay idle, so the MPJ ranks have the CPUs.
 */
final class MpjRunner {
    private MpjRunner() {
    }

    /**
     * Runs the mode on every rank.
     *
     * @param boot the gdasync ranks
     * @param o    the run
     * @param out  where rank 0 relays the child's output, or null
     * @return the child's result rows on rank 0, none on the others
     */
    static List<String> run(Bootstrap boot, HpgmgCommand o, PrintStream out) throws IOException, InterruptedException {
        String home = System.getenv(MpjStarter.MPJ_HOME);
        List<String> rows = new RootHeartbeat(boot, "hpgmg").onRankZero(heartbeat -> {
            if (MpjStarter.missing(home) != null) {
                throw new IllegalStateException("--mode mpj needs MPJ Express: MPJ_HOME is not set or has no"
                        + " lib/starter.jar; scripts/mprun installs it and sets MPJ_HOME");
            }
            List<String> r = MpjStarter.job("the MPJ Express run", home, boot.size(), MpjHpgmg.class.getName(), args(o),
                    MpjHpgmg.RESULT, MpjHpgmg.ERROR).echo(echo(out)).run(heartbeat);
            if (r.isEmpty()) {
                throw new IllegalStateException("the MPJ Express run exited with status 0 (its output is above)");
            }
            return r;
        });
        return rows == null ? List.of() : rows;
    }

    private static List<String> args(HpgmgCommand o) {
        List<String> a = new ArrayList<>(List.of(Integer.toString(o.log2Box), Integer.toString(o.boxesPerRank),
                "--solves", Integer.toString(o.solves), "--warmup-seconds", Double.toString(o.warmupSeconds),
                "--levels", Integer.toString(o.levels)));
        if (o.quiet) {
            a.add("--quiet");
        }
        return a;
    }

    /** Upstream's output, both streams to {@code out} marked {@code [mpj]}; the starter's banner left out. */
    private static ChildJob.Echo echo(PrintStream out) {
        return (line, stderr) -> {
            if (out != null && !line.isBlank() && !line.startsWith("MPJ Express")) {
                out.println("[mpj] " + line);
            }
        };
    }
}
