package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.Chart;
import dev.gdasync.apps.common.LineChart;

import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The latency-vs-size plot of {@code --plot}: one line per mode, one-way latency against message size,
 * both axes logarithmic, with a legend and axis labels ({@link Chart}, headless). The message rate's plot is the same
 * drawing of other values ({@link #write(List, String, String, Path)}).
 */
public final class LatencyPlot {
    /** Width of the image in pixels. */
    public static final int WIDTH = 800;
    /** Height of the image in pixels. */
    public static final int HEIGHT = 500;

    private static final Map<String, Color> COLORS = Map.of(
            "host", new Color(0x1f77b4), "sa", new Color(0xd62728), "mpj", new Color(0x2ca02c), "jucx", new Color(0x9467bd),
            "floor", new Color(0x555555), "ompi", new Color(0xe377c2), "ucx", new Color(0xbcbd22),
            "mpj-niodev", new Color(0x8c564b));

    private LatencyPlot() {
    }

    /**
     * Draws the plot and writes it as a PNG. Its folder must exist (the command line checked it): no folder is made.
     *
     * @param rows the results (rows of one mode form its line, in size order)
     * @param file where
     */
    public static void write(List<Result> rows, Path file) {
        Chart.write(render(rows, WIDTH, HEIGHT), file);
    }

    /**
     * One point of a curve.
     *
     * @param line  the curve (a mode)
     * @param bytes the message size (x)
     * @param value the value (y), positive
     */
    public record Point(String line, int bytes, double value) {
    }

    /**
     * Draws curves of any positive value against message size and writes them as a PNG.
     *
     * @param points the points (those of one line form it, in size order)
     * @param title  the plot's title
     * @param yLabel the y axis's label
     * @param file   where; its folder must exist
     */
    public static void write(List<Point> points, String title, String yLabel, Path file) {
        Chart.write(render(points, WIDTH, HEIGHT, title, yLabel), file);
    }

    /**
     * Draws the plot.
     *
     * @param rows   the results
     * @param width  image width
     * @param height image height
     * @return the image
     * @throws IllegalArgumentException if there is nothing to plot
     */
    public static BufferedImage render(List<Result> rows, int width, int height) {
        for (Result r : rows) {
            if (!(r.oneWayMicros() > 0)) {
                throw new IllegalArgumentException("cannot plot a latency of " + r.oneWayMicros() + " us on a log axis (" + r + ")");
            }
        }
        return render(rows.stream().map(r -> new Point(r.mode(), r.bytes(), r.oneWayMicros())).toList(), width, height,
                "pingpong: one-way latency vs message size", "one-way latency (\u00b5s, log scale)");
    }

    static BufferedImage render(List<Point> rows, int width, int height, String title, String yLabel) {
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no results to plot");
        }
        LineChart lines = new LineChart(Chart.Axis.bytes("message size (bytes, log scale)"), Chart.Axis.log(yLabel),
                COLORS);
        for (Point r : rows) {
            if (!(r.value() > 0)) {
                throw new IllegalArgumentException("cannot plot " + r.value() + " on a log axis (" + r + ")");
            }
            lines.add(r.line(), r.bytes(), r.value());
        }
        return Chart.render(lines.chart(title), width, height);
    }

    /**
     * The colours of the plot's lines, for other drawings of the same modes.
     *
     * @param modes the lines' names, in order
     * @return each one's colour, in that order: fixed colours for host, sa, mpj, jucx and the C peers, the others in
     * turn
     */
    public static Map<String, Color> palette(Iterable<String> modes) {
        return Chart.palette(modes, COLORS);
    }

    /** @return a size label: 8 B, 4 KiB, 1 MiB */
    static String bytes(double b) {
        return Chart.bytes(b);
    }

    /**
     * @param v a time in microseconds, a power of ten
     * @return its axis label without trailing zeros: 0.01, 0.1, 1, 10, 100
     */
    public static String micros(double v) {
        return Chart.decimal(v);
    }
}
