package dev.gdasync.apps.gabench;

import dev.gdasync.apps.common.Chart;
import dev.gdasync.apps.common.LineChart;
import org.jfree.chart.JFreeChart;

import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The plot of {@code --plot}: a panel per operation and layout (put contig, put strided, get contig, get strided), the
 * top row latency (µs per operation) and the bottom row bandwidth (MB/s) against patch size, both axes logarithmic, a
 * line per method ({@link Chart}, headless), in the pingpong plot's style.
 */
final class BenchPlot {
    static final int PANEL_W = 420;
    static final int PANEL_H = 330;
    private static final int HEADER = 36;
    private static final List<String> PANELS = List.of("put contig", "put strided", "get contig", "get strided");
    private static final Map<String, Color> COLORS = Map.of("ga", new Color(0x1f77b4), "ga-reg", new Color(0xff7f0e),
            "raw", new Color(0x2ca02c), "mpj", new Color(0xd62728));

    private BenchPlot() {
    }

    /** Draws the plot and writes it as a PNG (its folder must exist). */
    static void write(List<Row> rows, Path file) {
        Chart.write(render(rows), file);
    }

    /**
     * @return the image, {@link #PANEL_W} wide per panel
     * @throws IllegalArgumentException if there is nothing to plot
     */
    static BufferedImage render(List<Row> rows) {
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no results to plot");
        }
        List<JFreeChart> latency = new ArrayList<>();
        List<JFreeChart> bandwidth = new ArrayList<>();
        for (String panel : PANELS) {
            List<Row> mine = rows.stream().filter(r -> r.panel().equals(panel)).toList();
            latency.add(panel(mine, panel + ": latency", "\u00b5s per op", Row::medianMicros));
            bandwidth.add(panel(mine, panel + ": bandwidth", "MB/s", Row::megabytesPerSecond));
        }
        List<JFreeChart> all = new ArrayList<>(latency);
        all.addAll(bandwidth);
        return Chart.panels("gabench: global arrays vs raw window iput/iget vs MPJ Express, rank 0 to rank 1",
                PANELS.size(), PANEL_W, PANEL_H, HEADER, all);
    }

    /** @return the panel, or null (a blank place) when no row has a positive value */
    private static JFreeChart panel(List<Row> rows, String title, String unit, ToDoubleFunction<Row> value) {
        LineChart lines = new LineChart(Chart.Axis.bytes("patch size (bytes)"), Chart.Axis.log(unit), COLORS);
        for (String m : Report.METHODS) {
            rows.stream().filter(r -> r.method().equals(m) && value.applyAsDouble(r) > 0)
                    .forEach(r -> lines.add(m, r.bytes(), value.applyAsDouble(r)));
        }
        return lines.isEmpty() ? null : Chart.panel(title + " (" + unit + ")", lines.plot());
    }
}
