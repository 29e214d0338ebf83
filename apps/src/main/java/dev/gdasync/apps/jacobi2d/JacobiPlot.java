package dev.gdasync.apps.jacobi2d;

import dev.gdasync.apps.common.BarChart;
import dev.gdasync.apps.common.Chart;

import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The plot of {@code --plot}: one group of bars per case (mesh, PEs), one bar per mode, the height the time per
 * iteration in ms on one axis, its value written over it ({@link Chart}, headless, a PNG), from
 * every row of the {@code --csv} file (a later run of a case and mode replaces an earlier one).
 */
final class JacobiPlot {
    static final String HEADER = "mode,pes,nx,ny,iterations,seconds,ms_per_iteration,equal";
    static final int HEIGHT = 480;
    private static final int GROUP = 190;
    /** The room beside the groups: the axis and the margins. */
    private static final int AROUND = 90;
    /** The least width: room for the title and the legend when there is one case. */
    private static final int MIN_WIDTH = 480;
    private static final Map<String, Color> COLORS = Map.of("host", new Color(0x1f77b4), "sa", new Color(0xd62728), "ki",
            new Color(0x2ca02c));

    /** One CSV row. */
    record Row(String mode, int pes, int nx, int ny, int iterations, double msPerIteration) {
        String caseLabel() {
            return ny + "x" + nx + ", " + pes + " PE" + (pes == 1 ? "" : "s");
        }
    }

    private JacobiPlot() {
    }

    /** @return the rows of a CSV written by {@code --csv} */
    static List<Row> read(Path csv) {
        try {
            List<Row> rows = new ArrayList<>();
            for (String line : Files.readAllLines(csv)) {
                if (line.isBlank() || line.startsWith("mode,")) {
                    continue;
                }
                String[] f = line.split(",");
                rows.add(new Row(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                        Integer.parseInt(f[4]), Double.parseDouble(f[6])));
            }
            return rows;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + csv + ": " + e, e);
        }
    }

    /** Draws the plot into a PNG. */
    static void write(List<Row> rows, Path file) {
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no results to plot");
        }
        BarChart bars = new BarChart("case: grid, PEs", Chart.Axis.linear("ms per iteration"), COLORS)
                .labels((mode, c, ms) -> String.format(Locale.ROOT, "%.2f", ms));
        // A later row of a case and mode replaces an earlier one: the dataset keeps one value per bar.
        rows.forEach(r -> bars.add(r.mode(), r.caseLabel(), r.msPerIteration()));
        long cases = rows.stream().map(Row::caseLabel).distinct().count();
        Chart.write(bars.chart("jacobi2d: ms per iteration (lower is better)"),
                (int) Math.max(MIN_WIDTH, AROUND + GROUP * cases), HEIGHT, file);
    }
}
