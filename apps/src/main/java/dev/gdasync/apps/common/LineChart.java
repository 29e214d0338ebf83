package dev.gdasync.apps.common;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYTitleAnnotation;
import org.jfree.chart.block.BlockBorder;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.geom.Ellipse2D;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Lines of y against x, a colour and a legend entry each, a dot at every point ({@link Chart}'s style). A line's
 * points are drawn in order of x.
 */
public final class LineChart {
    private final Chart.Axis x;
    private final Chart.Axis y;
    private final Map<String, Color> fixed;
    private final XYSeriesCollection data = new XYSeriesCollection();
    private final Map<String, XYSeries> lines = new LinkedHashMap<>();

    static {
        Chart.headless();
    }

    /**
     * @param x      the x axis
     * @param y      the y axis
     * @param colours the colours of known lines' names; other lines take colours in turn
     */
    public LineChart(Chart.Axis x, Chart.Axis y, Map<String, Color> colours) {
        this.x = x;
        this.y = y;
        this.fixed = colours;
    }

    /**
     * Adds a line with no points yet, so that it has its place in the legend's order (and in every panel's).
     *
     * @param line the line's name
     * @return this
     */
    public LineChart line(String line) {
        lines.computeIfAbsent(line, k -> {
            XYSeries s = new XYSeries(k, true, true);
            data.addSeries(s);
            return s;
        });
        return this;
    }

    /**
     * Adds a point.
     *
     * @param line the line's name
     * @param xv   x
     * @param yv   y
     * @return this
     * @throws IllegalArgumentException if a value is not positive on a logarithmic axis
     */
    public LineChart add(String line, double xv, double yv) {
        if (x.scale() != Chart.Scale.LINEAR && !(xv > 0) || y.scale() != Chart.Scale.LINEAR && !(yv > 0)) {
            throw new IllegalArgumentException("cannot plot (" + xv + ", " + yv + ") of " + line + " on a log axis");
        }
        line(line);
        lines.get(line).add(xv, yv);
        return this;
    }

    /** @return whether no point was added */
    public boolean isEmpty() {
        return lines.values().stream().allMatch(s -> s.getItemCount() == 0);
    }

    /**
     * @return the lines as a plot with its axes and the legend inside its upper left corner, for a chart of
     * one's own (several plots that share an axis)
     * @throws IllegalArgumentException if no point was added
     */
    public XYPlot plot() {
        if (isEmpty()) {
            throw new IllegalArgumentException("no results to plot");
        }
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
        int i = 0;
        for (Map.Entry<String, Color> e : Chart.palette(lines.keySet(), fixed).entrySet()) {
            r.setSeriesPaint(i, e.getValue());
            r.setSeriesStroke(i, new BasicStroke(2.2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
            r.setSeriesShape(i, new Ellipse2D.Double(-4, -4, 8, 8));
            i++;
        }
        r.setDefaultLegendTextFont(Chart.LABEL);
        XYPlot p = new XYPlot(data, Chart.axis(x, lowest(true), highest(true)), Chart.axis(y, lowest(false), highest(false)), r);
        Chart.style(p);
        p.setDomainGridlinesVisible(true);
        p.setDomainMinorGridlinesVisible(x.scale() == Chart.Scale.LOG10);
        p.setRangeMinorGridlinesVisible(y.scale() == Chart.Scale.LOG10);
        p.setDomainMinorGridlinePaint(Chart.MINOR_GRID);
        p.setRangeMinorGridlinePaint(Chart.MINOR_GRID);
        p.setDomainMinorGridlineStroke(new BasicStroke(1f));
        p.setRangeMinorGridlineStroke(new BasicStroke(1f));
        LegendTitle legend = new LegendTitle(r);
        legend.setBackgroundPaint(new Color(255, 255, 255, 235));
        legend.setFrame(new BlockBorder(Color.GRAY));
        legend.setItemFont(Chart.LABEL);
        legend.setMargin(new RectangleInsets(8, 8, 8, 8));
        p.addAnnotation(new XYTitleAnnotation(0.0, 1.0, legend, RectangleAnchor.TOP_LEFT));
        return p;
    }

    /**
     * @param title the chart's title
     * @return the chart
     * @throws IllegalArgumentException if no point was added
     */
    public JFreeChart chart(String title) {
        return Chart.chart(title, plot());
    }

    /**
     * @param xAxis the x values (else the y values)
     * @return the smallest value
     */
    public double lowest(boolean xAxis) {
        return lines.values().stream().filter(s -> s.getItemCount() > 0)
                .mapToDouble(s -> xAxis ? s.getMinX() : s.getMinY()).min().orElse(Double.NaN);
    }

    /**
     * @param xAxis the x values (else the y values)
     * @return the largest value
     */
    public double highest(boolean xAxis) {
        return lines.values().stream().filter(s -> s.getItemCount() > 0)
                .mapToDouble(s -> xAxis ? s.getMaxX() : s.getMaxY()).max().orElse(Double.NaN);
    }
}
