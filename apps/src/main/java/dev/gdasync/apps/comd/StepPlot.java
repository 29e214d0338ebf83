package dev.gdasync.apps.comd;

import dev.gdasync.apps.common.BarChart;
import dev.gdasync.apps.common.Chart;

import java.awt.Color;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The benchmark plot: one group of bars per case (potential, ranks, size), one bar per mode, each bar stacked from the
 * force, redistribution, exchange and remaining time of a step, in percent of the case's mpj step (of its first mode
 * without mpj), so cases of any size share one axis; the mpj time per step is written under each group
 * ({@link Chart}, headless, a PNG, as the ping-pong's plot).
 */
final class StepPlot {
    /** The width of a plot of few cases; more cases widen it. */
    static final int WIDTH = 1000;
    /** The least width of a case's group of bars. */
    private static final int MIN_GROUP = 120;
    static final int HEIGHT = 560;
    /** The room beside the groups: the axis and the margins. */
    private static final int AROUND = 220;
    private static final Map<String, Color> PARTS = partColours();

    private StepPlot() {
    }

    private static Map<String, Color> partColours() {
        Map<String, Color> m = new LinkedHashMap<>();
        m.put("force", new Color(0x1f77b4));
        m.put("redistribution", new Color(0x2ca02c));
        m.put("exchange", new Color(0xd62728));
        m.put("other", new Color(0xbbbbbb));
        return m;
    }

    static void write(List<ComdCsv.Row> rows, Path file) {
        Map<String, List<ComdCsv.Row>> cases = new LinkedHashMap<>();
        for (ComdCsv.Row r : rows) {
            List<ComdCsv.Row> c = cases.computeIfAbsent(r.caseLabel(), k -> new ArrayList<>());
            c.removeIf(x -> x.mode().equals(r.mode())); // a later run of a case replaces the earlier one
            c.add(r);
        }
        BarChart bars = new BarChart("case: potential, ranks, unit cells (4 atoms each); bars: mpj, host, sa, ki as run",
                Chart.Axis.linear("% of the case's mpj step").ticks(v -> String.format(Locale.ROOT, "%.0f %%", v)), PARTS);
        for (Map.Entry<String, List<ComdCsv.Row>> e : cases.entrySet()) {
            double base = base(e.getValue());
            String label = e.getKey() + "\n" + String.format(Locale.ROOT, "100 %% = %.2f ms", base);
            for (ComdCsv.Row r : e.getValue()) {
                double other = Math.max(0, r.stepMs() - r.forceMs() - r.redistributeMs() - r.exchangeMs());
                double[] parts = {r.forceMs(), r.redistributeMs(), r.exchangeMs(), other};
                int p = 0;
                for (Map.Entry<String, Color> part : PARTS.entrySet()) {
                    String series = r.mode() + " " + part.getKey();
                    bars.stack(series, r.mode(), part.getValue()).add(series, label, 100 * parts[p++] / base);
                }
            }
        }
        // The mode over each bar, on its top part.
        bars.labels((series, category, value) -> series.endsWith(" other") ? series.substring(0, series.indexOf(' ')) : null)
                .legend(PARTS);
        Chart.write(bars.chart("CoMD time per step by communication model (100 % = the case's mpj step)"),
                width(cases.size()), HEIGHT, file);
    }

    /** @return the image width for this many cases */
    static int width(int cases) {
        return Math.max(WIDTH, AROUND + cases * MIN_GROUP);
    }

    private static double base(List<ComdCsv.Row> c) {
        for (ComdCsv.Row r : c) {
            if (r.mode().equals("mpj")) {
                return r.stepMs();
            }
        }
        return c.getFirst().stepMs();
    }
}
