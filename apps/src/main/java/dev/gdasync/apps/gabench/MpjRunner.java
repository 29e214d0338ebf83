package dev.gdasync.apps.gabench;

import dev.gdasync.apps.common.ChildJob;
import dev.gdasync.apps.common.MpjStarter;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs {@link MpjGaBench} under MPJ Express's starter ({@link MpjStarter}, 2 ranks) as a child job of rank 0, as the
 * pingpong's mpj mode does, and collects its rows. The gdasync ranks stay idle meanwhile, so the MPJ ranks have the CPUs.
 */
final class MpjRunner {
    private MpjRunner() {
    }

    /**
     * Runs the baseline; calls {@code heartbeat} every half second while it runs.
     *
     * @return the rows, two per layout and size
     * @throws IllegalStateException if the MPJ run failed or reported too few rows
     */
    static List<Row> run(String mpjHome, Plan plan, Runnable heartbeat) throws IOException, InterruptedException {
        List<Row> rows = new ArrayList<>();
        for (String line : MpjStarter.job("the MPJ Express baseline", mpjHome, 2, MpjGaBench.class.getName(), plan.args(),
                MpjGaBench.RESULT, MpjGaBench.ERROR).echo(ChildJob.Echo.prefixed("mpj: ")).run(heartbeat)) {
            rows.add(MpjGaBench.parse(MpjGaBench.RESULT + " " + line));
        }
        if (rows.size() != 4 * plan.sizes().size()) {
            throw new IllegalStateException("the MPJ Express baseline reported " + rows.size() + " of "
                    + 4 * plan.sizes().size() + " rows");
        }
        return List.copyOf(rows);
    }
}
