package dev.gdasync.apps.gabench;

import dev.gdasync.apps.bench.MpjChildJob;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs {@link MpjGaBench} under MPJ Express's starter with the multicore device as a child JVM of rank 0 ({@code java
 * -jar $MPJ_HOME/lib/starter.jar -np 2 -dev multicore -cp CLASSPATH MpjGaBench PLAN...}), as the pingpong's mpj mode
 * does, and collects its rows. The gdasync ranks stay idle meanwhile, so the MPJ ranks have the CPUs.
 */
final class MpjRunner {
    private MpjRunner() {
    }

    /**
     * @param mpjHome the value of MPJ_HOME, or null
     * @return why MPJ Express cannot run here, or null if it can
     */
    static String missing(String mpjHome) {
        return MpjChildJob.missing(mpjHome);
    }

    /**
     * Runs the baseline; calls {@code heartbeat} every half second while it runs.
     *
     * @return the rows, two per layout and size
     * @throws IllegalStateException if the MPJ run failed or reported too few rows
     */
    static List<Row> run(String mpjHome, Plan plan, Runnable heartbeat) throws IOException, InterruptedException {
        List<Row> rows = new ArrayList<>();
        for (String line : MpjChildJob.run(mpjHome, 2, MpjGaBench.class.getName(), plan.args(), MpjGaBench.RESULT,
                MpjGaBench.ERROR, heartbeat)) {
            rows.add(MpjGaBench.parse(MpjGaBench.RESULT + " " + line));
        }
        if (rows.size() != 4 * plan.sizes().size()) {
            throw new IllegalStateException("the MPJ Express baseline reported " + rows.size() + " of "
                    + 4 * plan.sizes().size() + " rows");
        }
        return List.copyOf(rows);
    }
}
