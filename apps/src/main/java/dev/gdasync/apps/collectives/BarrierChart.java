package dev.gdasync.apps.collectives;

import dev.gdasync.apps.common.BarChart;
import dev.gdasync.apps.common.Chart;
import dev.gdasync.apps.pingpong.LatencyPlot;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The barrier's plot: it has no size to draw a curve against, so one horizontal bar per method, its length the median
 * time on a logarithmic axis, the time and the ratio to Open MPI's written beside it, in the colours of the other
 * collectives' plots ({@link LatencyPlot#palette}).
 */
final class BarrierChart {
    private static final int WIDTH = LatencyPlot.WIDTH;
    /** The height around the bars: the title and the axis. */
    private static final int AROUND = 120;
    private static final int BAR = 38;

    private BarrierChart() {
    }

    /**
     * @param rows  the barrier's rows, a bar each, in order
     * @param title the title
     * @param file  where; its folder must exist
     */
    static void write(List<BenchRow> rows, String title, Path file) {
        double min = rows.stream().mapToDouble(BenchRow::medianMicros).min().orElse(1);
        double max = rows.stream().mapToDouble(BenchRow::medianMicros).max().orElse(10);
        int d0 = (int) Math.floor(Math.log10(min));
        int d1 = Math.max(d0 + 1, (int) Math.ceil(Math.log10(max)));
        // The axis starts one decade below the fastest so that its bar has a length; room on the right for the labels.
        BarChart bars = new BarChart("", Chart.Axis.log("time per barrier (\u00b5s, log scale), median of the reps")
                .range(Math.pow(10, d0 - 1), Math.pow(10, d1 + 1)),
                LatencyPlot.palette(rows.stream().map(BenchRow::method).toList()))
                .horizontal().colourEachCategory()
                .labels((series, method, micros) -> String.format(Locale.ROOT, "%.2f \u00b5s", micros)
                        + rows.stream().filter(r -> r.method().equals(method)).findFirst()
                        .flatMap(r -> BenchReport.xOmpi(rows, r)).map(x -> " (" + BenchReport.ratio(x) + "x ompi)").orElse(""));
        rows.forEach(r -> bars.add("median", r.method(), r.medianMicros()));
        Chart.write(bars.chart(title), WIDTH, AROUND + rows.size() * BAR, file);
    }
}
