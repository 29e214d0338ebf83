package dev.gdasync.apps.comd;

import dev.gdasync.apps.common.ChildJob;
import dev.gdasync.apps.common.MpjStarter;
import dev.gdasync.apps.common.RootHeartbeat;
import dev.gdasync.libmp.bootstrap.Bootstrap;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code mpj}: rank 0 runs {@link ComdMpj} under MPJ Express's starter ({@link MpjStarter}: N rank threads in one JVM)
 * as a child job, relays its output and reads its result; the other ranks keep pace with rank 0's heartbeat
 * ({@link RootHeartbeat}) and stay idle, so the MPJ ranks have the CPUs.
 */
final class MpjRunner {
    private MpjRunner() {
    }

    /**
     * Runs the mode on every rank.
     *
     * @param boot  the gdasync ranks (for the heartbeat)
     * @param o     the run
     * @param print whether the child prints CoMD's output
     * @param out   where rank 0 relays the child's output
     * @return the result on rank 0, null on the others
     */
    static RunResult run(Bootstrap boot, ComdOptions o, boolean print, PrintStream out) throws IOException, InterruptedException {
        return new RootHeartbeat(boot, "comd").onRankZero(heartbeat -> {
            List<String> args = new ArrayList<>();
            args.add(print ? "print" : "quiet");
            args.addAll(o.simulationArgs());
            List<String> results = MpjStarter.job("the MPJ Express run", System.getenv(MpjStarter.MPJ_HOME), o.ranks(),
                    ComdMpj.class.getName(), args, ComdMpj.RESULT, ComdMpj.ERROR).echo(echo(out)).run(heartbeat);
            if (results.size() != 1) {
                throw new IllegalStateException("the MPJ Express run exited with status 0 and " + results.size()
                        + " results (its output is above)");
            }
            return RunResult.decode(results.getFirst());
        });
    }

    /** CoMD's output as it is: standard output to {@code out}, errors to this process's; MPJ's banner left out. */
    private static ChildJob.Echo echo(PrintStream out) {
        return (line, stderr) -> {
            if (line.startsWith("MPJ Express (") || line.isBlank() && stderr) {
                return;
            }
            (stderr ? System.err : out).println(line);
        };
    }
}
