package dev.gdasync.apps.nbc;

import dev.gdasync.apps.common.Chart;
import dev.gdasync.apps.common.LineChart;
import org.jfree.chart.JFreeChart;

import java.awt.Color;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The plot of {@code --plot}: one column per collective; the top row the overlap (%, linear) and the bottom row the
 * pure communication time (µs, logarithmic) against the message size (logarithmic), a line per engine
 * ({@link Chart}, headless, a PNG).
 */
final class OverlapPlot {
    private static final int W = 400;
    private static final int H = 300;
    private static final int HEADER = 30;
    private static final List<String> ENGINES = List.of("host", "offload");
    private static final Map<String, Color> COLORS = Map.of("host", new Color(0xd62728), "offload", new Color(0x1f77b4));

    private OverlapPlot() {
    }

    static void write(List<OverlapRow> rows, Path file) {
        List<String> colls = rows.stream().map(OverlapRow::coll).distinct().toList();
        List<JFreeChart> overlap = new ArrayList<>();
        List<JFreeChart> pure = new ArrayList<>();
        for (String coll : colls) {
            List<OverlapRow> mine = rows.stream().filter(r -> r.coll().equals(coll)).toList();
            overlap.add(panel(mine, coll + ": overlap (%)", Chart.Axis.linear("%").range(0, 100)
                    .ticks(v -> String.format(Locale.ROOT, "%.0f", v)), OverlapRow::overlap));
            // A time of 0 (too fast to see) is drawn at the axis's floor, 1 ns.
            pure.add(panel(mine, coll + ": pure comm. (\u00b5s)", Chart.Axis.log("\u00b5s"),
                    r -> Math.max(1e-3, r.pure())));
        }
        List<JFreeChart> all = new ArrayList<>(overlap);
        all.addAll(pure);
        Chart.write(Chart.panels("nbc-overlap: host progress engine vs offload (collective proxy), "
                + rows.getFirst().ranks() + " ranks", colls.size(), W, H, HEADER, all), file);
    }

    private static JFreeChart panel(List<OverlapRow> rows, String title, Chart.Axis y, ToDoubleFunction<OverlapRow> value) {
        LineChart lines = new LineChart(Chart.Axis.bytes("bytes"), y, COLORS);
        for (String engine : ENGINES) {
            rows.stream().filter(r -> r.engine().equals(engine))
                    .forEach(r -> lines.add(engine, r.bytes(), value.applyAsDouble(r)));
        }
        return lines.isEmpty() ? null : Chart.panel(title, lines.plot());
    }
}
