package dev.gdasync.apps.common;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.LegendItem;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.axis.AxisLocation;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.labels.CategoryItemLabelGenerator;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.GroupedStackedBarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.KeyToGroupMap;
import org.jfree.data.category.CategoryDataset;
import org.jfree.data.category.DefaultCategoryDataset;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Paint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Bars: a bar per series in each category, side by side; or stacked, a stack per group of series; or a bar per
 * category in its own colour ({@link Chart}'s style). Vertical unless {@link #horizontal()}.
 */
public final class BarChart {
    private final String categoryLabel;
    private final Chart.Axis value;
    private final Map<String, Color> fixed;
    private final DefaultCategoryDataset data = new DefaultCategoryDataset();
    private final Map<String, Color> seriesColours = new LinkedHashMap<>();
    private KeyToGroupMap groups;
    private boolean horizontal;
    private boolean colourByCategory;
    private Label label;
    private Map<String, Color> legend;

    static {
        Chart.headless();
    }

    /**
     * @param categoryLabel the category axis's label
     * @param value         the value axis (linear, or logarithmic with its bars from the axis's lower end)
     * @param colours       the colours of known series' names (or categories', {@link #colourEachCategory()});
     *                      others take colours in turn
     */
    public BarChart(String categoryLabel, Chart.Axis value, Map<String, Color> colours) {
        this.categoryLabel = categoryLabel;
        this.value = value;
        this.fixed = colours;
    }

    /**
     * @param series   the bar's series (its colour and legend entry)
     * @param category the category the bar stands in
     * @param v        its value
     * @return this
     */
    public BarChart add(String series, String category, double v) {
        data.addValue(v, series, category);
        return this;
    }

    /**
     * Stacks a series on the others of its group: a stack per group in each category, in the order the series
     * were first added.
     *
     * @param series the series
     * @param group  its stack's name
     * @param colour its colour
     * @return this
     */
    public BarChart stack(String series, String group, Color colour) {
        if (groups == null) {
            groups = new KeyToGroupMap(group);
        }
        groups.mapKeyToGroup(series, group);
        seriesColours.put(series, colour);
        return this;
    }

    /** @return this, with bars drawn left to right and the categories down the side */
    public BarChart horizontal() {
        horizontal = true;
        return this;
    }

    /** @return this, with each category's bars in the category's colour (for one series, no legend) */
    public BarChart colourEachCategory() {
        colourByCategory = true;
        return this;
    }

    /**
     * @param l writes the label at a bar's end
     * @return this
     */
    public BarChart labels(Label l) {
        label = l;
        return this;
    }

    /**
     * @param entries the legend's entries and colours, instead of one per series
     * @return this
     */
    public BarChart legend(Map<String, Color> entries) {
        legend = entries;
        return this;
    }

    /**
     * @param title the chart's title
     * @return the chart, its legend below the plot (none when each category has its colour)
     * @throws IllegalArgumentException if no bar was added
     */
    public JFreeChart chart(String title) {
        if (data.getRowCount() == 0) {
            throw new IllegalArgumentException("no results to plot");
        }
        BarRenderer r = barRenderer();
        List<String> series = keys(data.getRowCount(), data::getRowKey);
        Map<String, Color> colours = Chart.palette(series, fixed);
        for (int i = 0; i < series.size(); i++) {
            r.setSeriesPaint(i, seriesColours.getOrDefault(series.get(i), colours.get(series.get(i))));
        }
        r.setBarPainter(new StandardBarPainter());
        r.setShadowVisible(false);
        r.setDrawBarOutline(false);
        r.setItemMargin(0.05);
        if (label != null) {
            r.setDefaultItemLabelGenerator(new Labels(label));
            r.setDefaultItemLabelsVisible(true);
            r.setDefaultItemLabelFont(Chart.TICK);
            r.setDefaultPositiveItemLabelPosition(horizontal
                    ? new ItemLabelPosition(ItemLabelAnchor.OUTSIDE3, TextAnchor.CENTER_LEFT)
                    : new ItemLabelPosition(ItemLabelAnchor.OUTSIDE12, TextAnchor.BOTTOM_CENTER));
        }
        CategoryAxis c = new CategoryAxis(categoryLabel);
        c.setLabelFont(Chart.LABEL);
        c.setTickLabelFont(Chart.TICK);
        c.setMaximumCategoryLabelLines(2);
        c.setCategoryMargin(0.25);
        double lo = Double.MAX_VALUE, hi = -Double.MAX_VALUE;
        for (int row = 0; row < data.getRowCount(); row++) {
            for (int col = 0; col < data.getColumnCount(); col++) {
                Number n = data.getValue(row, col);
                if (n != null && (value.scale() == Chart.Scale.LINEAR || n.doubleValue() > 0)) {
                    lo = Math.min(lo, n.doubleValue());
                    hi = Math.max(hi, n.doubleValue());
                }
            }
        }
        if (groups != null) {
            hi = ((GroupedStackedBarRenderer) r).findRangeBounds(data).getUpperBound();
        }
        ValueAxis v = Chart.axis(value, lo, hi);
        CategoryPlot p = new CategoryPlot(data, c, v, r);
        p.setOrientation(horizontal ? PlotOrientation.HORIZONTAL : PlotOrientation.VERTICAL);
        p.setRangeAxisLocation(AxisLocation.BOTTOM_OR_LEFT);
        Chart.style(p);
        p.setRangeGridlinesVisible(true);
        if (value.scale() == Chart.Scale.LOG10) {
            p.setRangeMinorGridlinesVisible(true);
            p.setRangeMinorGridlinePaint(Chart.MINOR_GRID);
            p.setRangeMinorGridlineStroke(new BasicStroke(1f));
        }
        if (legend != null) {
            LegendItemCollection items = new LegendItemCollection();
            legend.forEach((name, colour) -> items.add(new LegendItem(name, colour)));
            p.setFixedLegendItems(items);
        }
        JFreeChart chart = Chart.chart(title, p);
        if (!colourByCategory) {
            LegendTitle l = new LegendTitle(p);
            l.setItemFont(Chart.LABEL);
            l.setPosition(RectangleEdge.BOTTOM);
            chart.addSubtitle(l);
        }
        return chart;
    }

    /** @return the dataset's row or column keys as strings (JFreeChart's lists of them are raw) */
    private static List<String> keys(int n, IntFunction<Comparable<?>> key) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(key.apply(i).toString());
        }
        return out;
    }

    private BarRenderer barRenderer() {
        if (groups != null) {
            GroupedStackedBarRenderer r = new GroupedStackedBarRenderer();
            r.setSeriesToGroupMap(groups);
            return r;
        }
        if (colourByCategory) {
            Map<String, Color> colours = Chart.palette(keys(data.getColumnCount(), data::getColumnKey), fixed);
            return new BarRenderer() {
                @Override
                public Paint getItemPaint(int row, int column) {
                    return colours.get(data.getColumnKey(column).toString());
                }
            };
        }
        return new BarRenderer();
    }

    /** Writes an item label of a bar chart. */
    @FunctionalInterface
    public interface Label {
        /**
         * @param series   the bar's series
         * @param category the bar's category
         * @param value    its value
         * @return its label, or null for none
         */
        String label(String series, String category, double value);
    }

    /** A {@link Label} as JFreeChart's label generator. */
    private record Labels(Label label) implements CategoryItemLabelGenerator {
        @Override
        public String generateRowLabel(CategoryDataset d, int row) {
            return d.getRowKey(row).toString();
        }

        @Override
        public String generateColumnLabel(CategoryDataset d, int column) {
            return d.getColumnKey(column).toString();
        }

        @Override
        public String generateLabel(CategoryDataset d, int row, int column) {
            Number v = d.getValue(row, column);
            return v == null ? null : label.label(d.getRowKey(row).toString(), d.getColumnKey(column).toString(),
                    v.doubleValue());
        }
    }
}
