package dev.gdasync.apps.hpgmg;

import dev.gdasync.apps.common.Chart;
import dev.gdasync.apps.common.LineChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.CombinedRangeXYPlot;
import org.jfree.chart.plot.XYPlot;

import java.awt.Color;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The plot of {@code --plot}: time per solve against box size, one panel per rank count, one line per mode,
 * the time axis logarithmic and shared by the panels ({@link Chart}, headless), from the rows of
 * the {@code --csv} file (every run appended so far), so runs on 2 and 4 ranks end up in one image.
 */
final class SolvePlot {
    static final int PANEL_WIDTH = 420;
    static final int HEIGHT = 480;

    private static final int LEFT = 78;
    private static final Map<String, Color> COLORS = Map.of("mpj", new Color(0x2ca02c), "host", new Color(0x1f77b4),
            "sa", new Color(0xd62728), "ki", new Color(0x9467bd));

    /** One CSV row: a mode's time per solve for one rank count and box size. */
    record Row(String mode, int ranks, int log2Box, double secondsPerSolve) {
    }

    private SolvePlot() {
    }

    /**
     * Reads the rows of a CSV written by {@code --csv}.
     *
     * @param csv the file
     * @return its rows
     * @throws IllegalArgumentException if the header is not {@link Summary#CSV_HEADER} or a row does not parse
     */
    static List<Row> read(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv);
        if (lines.isEmpty() || !lines.getFirst().equals(Summary.CSV_HEADER)) {
            throw new IllegalArgumentException(csv + " is not an hpgmg CSV: its first line is not '" + Summary.CSV_HEADER + "'");
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split(",");
            try {
                rows.add(new Row(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), Double.parseDouble(f[6])));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(csv + " line " + (i + 1) + ": not a row of mode,ranks,log2_box,...: '"
                        + lines.get(i) + "'", e);
            }
        }
        return rows;
    }

    /**
     * Draws the rows and writes a PNG. Rows of the same mode, ranks and box size (runs repeated) are averaged.
     *
     * @param rows the results
     * @param file where
     */
    static void write(List<Row> rows, Path file) {
        Chart.write(render(rows), file);
    }

    /**
     * Draws the rows.
     *
     * @param rows the results
     * @return the image, {@link #PANEL_WIDTH} wide per rank count
     * @throws IllegalArgumentException if there is nothing to plot or a time is not positive
     */
    static BufferedImage render(List<Row> rows) {
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no results to plot");
        }
        // ranks -> mode -> log2 box -> sum of seconds and count
        Map<Integer, Map<String, TreeMap<Integer, double[]>>> data = new TreeMap<>();
        List<String> modes = new ArrayList<>();
        for (Row r : rows) {
            if (!(r.secondsPerSolve() > 0)) {
                throw new IllegalArgumentException("cannot plot a time of " + r.secondsPerSolve() + " s on a log axis (" + r + ")");
            }
            double[] sum = data.computeIfAbsent(r.ranks(), k -> new TreeMap<>())
                    .computeIfAbsent(r.mode(), k -> new TreeMap<>())
                    .computeIfAbsent(r.log2Box(), k -> new double[2]);
            sum[0] += r.secondsPerSolve();
            sum[1]++;
            if (!modes.contains(r.mode())) {
                modes.add(r.mode());
            }
        }
        modes.sort(Comparator.comparingInt(m -> List.of("mpj", "host", "sa", "ki").indexOf(m) & 0xff));
        Chart.Axis time = Chart.Axis.log("seconds per solve (log scale)");
        CombinedRangeXYPlot plot = new CombinedRangeXYPlot(Chart.axis(time,
                rows.stream().mapToDouble(Row::secondsPerSolve).min().orElseThrow(),
                rows.stream().mapToDouble(Row::secondsPerSolve).max().orElseThrow()));
        plot.setGap(20);
        int x0 = rows.stream().mapToInt(Row::log2Box).min().orElseThrow();
        int x1 = Math.max(x0 + 1, rows.stream().mapToInt(Row::log2Box).max().orElseThrow());
        for (Map.Entry<Integer, Map<String, TreeMap<Integer, double[]>>> e : data.entrySet()) {
            // Every panel has every mode, in one order, so that the colours and the first panel's legend hold for all.
            LineChart panel = new LineChart(Chart.Axis.linear(e.getKey() + (e.getKey() == 1 ? " rank" : " ranks")
                    + ": box size (cells per box)").range(x0 - 0.3, x1 + 0.3).ticks(b -> (1 << (int) b) + "\u00b3"), time, COLORS);
            modes.forEach(panel::line);
            e.getValue().forEach((mode, boxes) -> boxes.forEach((box, sum) -> panel.add(mode, box, sum[0] / sum[1])));
            XYPlot p = panel.plot();
            ((NumberAxis) p.getDomainAxis()).setTickUnit(new NumberTickUnit(1)); // a tick per box size
            if (plot.getSubplots().size() > 0) {
                p.clearAnnotations(); // the first panel's legend serves all
            }
            plot.add(p);
        }
        int width = LEFT + data.size() * PANEL_WIDTH;
        return Chart.render(Chart.chart("hpgmg: time per F-cycle solve vs box size", plot), width, HEIGHT);
    }
}
