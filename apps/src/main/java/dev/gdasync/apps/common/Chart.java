package dev.gdasync.apps.common;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.TickUnit;
import org.jfree.chart.axis.TickUnits;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.block.RectangleConstraint;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.Plot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleInsets;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleFunction;

/**
 * The apps' PNG charts, drawn by JFreeChart in one style: the axes ({@link Axis}), charts of one plot
 * ({@link #chart}), several charts as panels of one image ({@link #panels}), and the PNG file ({@link #write}). The two
 * kinds of plot are {@link LineChart} (lines of y against x, each axis linear or logarithmic) and {@link BarChart}
 * (bars side by side, stacked in groups, or horizontal). Headless: no display is needed, or wanted, to draw into an
 * image. The apps keep their data, colours and titles; this class keeps how a chart looks.
 */
public final class Chart {
    /** The lines' colours after the fixed ones an app gives, in turn (matplotlib's, as the fixed ones are). */
    private static final Color[] OTHER = {new Color(0xff7f0e), new Color(0x8c564b), new Color(0x17becf),
            new Color(0x393b79), new Color(0xad494a), new Color(0x637939), new Color(0x7b4173), new Color(0x8c6d31)};
    static final Color GRID = new Color(0xcccccc);
    static final Color MINOR_GRID = new Color(0xeeeeee);
    static final Font TITLE = new Font(Font.SANS_SERIF, Font.BOLD, 15);
    static final Font PANEL_TITLE = new Font(Font.SANS_SERIF, Font.BOLD, 13);
    static final Font LABEL = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
    static final Font TICK = new Font(Font.SANS_SERIF, Font.PLAIN, 12);

    static {
        headless();
    }

    private Chart() {
    }

    /** Sets AWT headless unless the command line chose: no display is needed (or wanted) to draw into an image. */
    static void headless() {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    /** How an axis places its values. */
    public enum Scale {
        /** Linear. */
        LINEAR,
        /** Logarithmic, ticks at powers of two (message sizes). */
        LOG2,
        /** Logarithmic, ticks at powers of ten. */
        LOG10
    }

    /**
     * An axis: its label, scale, how a tick is written, and its range (NaN for the data's: whole powers on a
     * logarithmic axis, from zero on a linear one).
     *
     * @param label     the axis's label
     * @param scale     linear or logarithmic
     * @param tickLabel writes a tick's value; null for JFreeChart's own numbers (linear axes only)
     * @param from      the lowest value shown, or NaN
     * @param to        the highest value shown, or NaN
     */
    public record Axis(String label, Scale scale, DoubleFunction<String> tickLabel, double from, double to) {
        /**
         * @param label the label
         * @return message sizes: logarithmic, powers of two written as 8 B, 4 KiB, 1 MiB
         */
        public static Axis bytes(String label) {
            return new Axis(label, Scale.LOG2, Chart::bytes, Double.NaN, Double.NaN);
        }

        /**
         * @param label the label
         * @return a logarithmic axis, powers of ten written without trailing zeros (0.01, 1, 100)
         */
        public static Axis log(String label) {
            return new Axis(label, Scale.LOG10, Chart::decimal, Double.NaN, Double.NaN);
        }

        /**
         * @param label the label
         * @return a linear axis from zero
         */
        public static Axis linear(String label) {
            return new Axis(label, Scale.LINEAR, null, Double.NaN, Double.NaN);
        }

        /**
         * @param lower the lowest value shown
         * @param upper the highest value shown
         * @return this axis over that range
         */
        public Axis range(double lower, double upper) {
            return new Axis(label, scale, tickLabel, lower, upper);
        }

        /**
         * @param format writes a tick's value
         * @return this axis with those tick labels
         */
        public Axis ticks(DoubleFunction<String> format) {
            return new Axis(label, scale, format, from, to);
        }
    }

    /**
     * @param title the title
     * @param plot  the plot
     * @return a chart of the plot in this class's style, without a legend of its own (the plot's is inside it)
     */
    public static JFreeChart chart(String title, Plot plot) {
        JFreeChart c = new JFreeChart(title, TITLE, plot, false);
        c.setBackgroundPaint(Color.WHITE);
        // Room on the right for half the last tick label, which is centred on the axis's end.
        c.setPadding(new RectangleInsets(6, 6, 6, 28));
        return c;
    }

    /**
     * @param title the title of a panel of {@link #panels}
     * @param plot  the plot
     * @return a chart with a smaller title than {@link #chart}'s
     */
    public static JFreeChart panel(String title, Plot plot) {
        JFreeChart c = chart(title, plot);
        c.getTitle().setFont(PANEL_TITLE);
        return c;
    }

    /**
     * An axis for a chart of one's own (a plot of {@link LineChart#plot()} panels that share it).
     *
     * @param a      the axis
     * @param lowest the data's smallest value
     * @param highest the data's largest value
     * @return the JFreeChart axis, over {@code a}'s range or one that holds the data
     */
    public static ValueAxis axis(Axis a, double lowest, double highest) {
        ValueAxis out;
        switch (a.scale()) {
            case LINEAR -> {
                NumberAxis n = new NumberAxis(a.label());
                n.setAutoRangeIncludesZero(true);
                if (a.tickLabel() != null) {
                    n.setNumberFormatOverride(new TickFormat(a.tickLabel()));
                }
                out = n;
            }
            case LOG2, LOG10 -> {
                double base = a.scale() == Scale.LOG2 ? 2 : 10;
                PowerAxis l = new PowerAxis(a.label(), base);
                l.setNumberFormatOverride(new TickFormat(a.tickLabel() != null ? a.tickLabel() : Chart::decimal));
                if (Double.isNaN(a.from()) && lowest > 0) {
                    int p0 = (int) Math.floor(l.calculateLog(lowest));
                    int p1 = (int) Math.ceil(l.calculateLog(highest));
                    int least = a.scale() == Scale.LOG2 ? 2 : 1;
                    if (p1 - p0 < least) {
                        p0 -= a.scale() == Scale.LOG2 ? 1 : 0;
                        p1 = p0 + least;
                    }
                    l.setRange(Math.pow(base, p0), Math.pow(base, p1));
                }
                out = l;
            }
            default -> throw new IllegalArgumentException("no such scale: " + a.scale());
        }
        if (!Double.isNaN(a.from())) {
            out.setRange(a.from(), a.to());
        }
        out.setLabelFont(LABEL);
        out.setTickLabelFont(TICK);
        out.setTickLabelPaint(Color.DARK_GRAY);
        return out;
    }

    static void style(XYPlot p) {
        p.setBackgroundPaint(Color.WHITE);
        p.setOutlinePaint(Color.BLACK);
        p.setAxisOffset(RectangleInsets.ZERO_INSETS);
        p.setDomainGridlinePaint(GRID);
        p.setRangeGridlinePaint(GRID);
        p.setDomainGridlineStroke(new BasicStroke(1f));
        p.setRangeGridlineStroke(new BasicStroke(1f));
    }

    static void style(CategoryPlot p) {
        p.setBackgroundPaint(Color.WHITE);
        p.setOutlinePaint(Color.BLACK);
        p.setAxisOffset(RectangleInsets.ZERO_INSETS);
        p.setRangeGridlinePaint(GRID);
        p.setRangeGridlineStroke(new BasicStroke(1f));
    }

    /**
     * Draws a chart.
     *
     * @param chart  the chart
     * @param width  pixels
     * @param height pixels
     * @return the image
     * @throws IllegalStateException if drawing failed (a headless JDK without any font)
     */
    public static BufferedImage render(JFreeChart chart, int width, int height) {
        return panels(null, 1, width, height, 0, List.of(chart));
    }

    /**
     * Draws charts as panels of one image, row by row, under a title.
     *
     * @param title       the image's title, or null
     * @param columns     panels per row
     * @param panelWidth  a panel's width, pixels
     * @param panelHeight a panel's height, pixels
     * @param titleHeight the title's height above the panels, pixels
     * @param charts      the panels, in order; a null leaves its place blank
     * @return the image, {@code columns * panelWidth} wide
     * @throws IllegalStateException if drawing failed (a headless JDK without any font)
     */
    public static BufferedImage panels(String title, int columns, int panelWidth, int panelHeight, int titleHeight,
                                       List<JFreeChart> charts) {
        int rows = Math.max(1, (charts.size() + columns - 1) / columns);
        BufferedImage img = new BufferedImage(columns * panelWidth, titleHeight + rows * panelHeight,
                BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, img.getWidth(), img.getHeight());
            if (title != null) {
                TextTitle t = new TextTitle(title, TITLE);
                t.arrange(g, RectangleConstraint.NONE); // lays the text out: a title not arranged draws nothing
                t.draw(g, new Rectangle2D.Double(0, 0, img.getWidth(), titleHeight));
            }
            for (int i = 0; i < charts.size(); i++) {
                if (charts.get(i) != null) {
                    charts.get(i).draw(g, new Rectangle2D.Double((i % columns) * panelWidth,
                            titleHeight + (i / columns) * panelHeight, panelWidth, panelHeight));
                }
            }
        } catch (Error e) {
            // Headless JDKs without any font installed fail here, not earlier.
            throw new IllegalStateException("drawing the plot failed (" + e + "); text needs a font: install fontconfig"
                    + " and a font package (Debian: fonts-dejavu-core)", e);
        } finally {
            g.dispose();
        }
        return img;
    }

    /**
     * Draws a chart and writes it as a PNG.
     *
     * @param chart  the chart
     * @param width  pixels
     * @param height pixels
     * @param file   where; its folder must exist (the command lines check it): no folder is made
     */
    public static void write(JFreeChart chart, int width, int height, Path file) {
        write(render(chart, width, height), file);
    }

    /**
     * Writes an image as a PNG.
     *
     * @param img  the image
     * @param file where; its folder must exist
     * @throws UncheckedIOException if it cannot be written
     */
    public static void write(BufferedImage img, Path file) {
        // Through a stream of our own: ImageIO's own file handling says only "Can't create an ImageOutputStream!".
        try (OutputStream out = Files.newOutputStream(file)) {
            if (!ImageIO.write(img, "png", out)) {
                throw new IllegalStateException("this JDK has no PNG writer");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the plot " + file + ": " + e, e);
        }
    }

    /**
     * The colours of lines (or bars) by name.
     *
     * @param names the names, in order
     * @param fixed the colours of known names
     * @return each name's colour, in that order: its fixed one, else the next of a palette of others in turn, passing
     *         over the fixed colours of the names drawn (two lines of one chart never share a colour while the palette
     *         lasts)
     */
    public static Map<String, Color> palette(Iterable<String> names, Map<String, Color> fixed) {
        Set<Color> taken = new HashSet<>();
        for (String m : names) {
            Color c = fixed.get(m);
            if (c != null) {
                taken.add(c);
            }
        }
        Map<String, Color> out = new LinkedHashMap<>();
        int other = 0;
        for (String m : names) {
            Color c = fixed.get(m);
            if (c == null) {
                for (int tries = 0; tries < OTHER.length; tries++) {
                    c = OTHER[other++ % OTHER.length];
                    if (!taken.contains(c)) {
                        break;
                    }
                }
            }
            out.put(m, c);
        }
        return out;
    }

    /**
     * @param b a size in bytes
     * @return its label: 8 B, 4 KiB, 1 MiB
     */
    public static String bytes(double b) {
        long v = Math.round(b);
        if (v >= 1 << 20 && v % (1 << 20) == 0) {
            return (v >> 20) + " MiB";
        }
        if (v >= 1024 && v % 1024 == 0) {
            return (v >> 10) + " KiB";
        }
        return v + " B";
    }

    /**
     * @param v a power of ten (or any value)
     * @return its label without trailing zeros: 0.01, 0.1, 1, 10, 100; one significant digit below 1
     */
    public static String decimal(double v) {
        if (v >= 1) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return BigDecimal.valueOf(v).round(new MathContext(1)).stripTrailingZeros().toPlainString();
    }

    /**
     * A logarithmic axis with ticks at whole powers only, as many as can be labelled without overlap, and the 2..9
     * multiples of a power of ten as minor grid lines.
     */
    private static final class PowerAxis extends LogAxis {
        PowerAxis(String label, double base) {
            super(label);
            setBase(base);
            setSmallestValue(Double.MIN_NORMAL);
            TickUnits units = new TickUnits();
            for (int step : new int[]{1, 2, 3, 4, 5, 10, 20}) {
                units.add(new NumberTickUnit(step, NumberFormat.getInstance(Locale.ROOT), step == 1 && base == 10 ? 9 : 0));
            }
            setStandardTickUnits(units);
            setTickUnit((NumberTickUnit) units.get(0), false, false);
        }

        /** A power's logarithm as the whole number it is: JFreeChart would leave out a tick at log10(0.1) = -0.99999... */
        @Override
        public double calculateLog(double value) {
            double l = super.calculateLog(value);
            double whole = Math.rint(l);
            return Math.abs(l - whole) < 1e-9 ? whole : l;
        }

        /** The widest label of every power on the axis: JFreeChart measures only the two ends'. */
        @Override
        protected double estimateMaximumTickLabelWidth(Graphics2D g2, TickUnit unit) {
            double widest = super.estimateMaximumTickLabelWidth(g2, unit);
            if (isVerticalTickLabels() || getNumberFormatOverride() == null) {
                return widest;
            }
            java.awt.FontMetrics fm = g2.getFontMetrics(getTickLabelFont());
            double inset = getTickLabelInsets().getLeft() + getTickLabelInsets().getRight();
            for (double p = Math.floor(calculateLog(getLowerBound())); p <= Math.ceil(calculateLog(getUpperBound())); p++) {
                widest = Math.max(widest, inset + fm.stringWidth(getNumberFormatOverride().format(calculateValue(p))));
            }
            return widest + 8;
        }
    }

    /** A tick label function as the {@link NumberFormat} JFreeChart's axes take. */
    private static final class TickFormat extends NumberFormat {
        private final transient DoubleFunction<String> format;

        TickFormat(DoubleFunction<String> format) {
            this.format = format;
        }

        @Override
        public StringBuffer format(double number, StringBuffer to, FieldPosition pos) {
            return to.append(format.apply(number));
        }

        @Override
        public StringBuffer format(long number, StringBuffer to, FieldPosition pos) {
            return to.append(format.apply(number));
        }

        @Override
        public Number parse(String source, ParsePosition pos) {
            throw new UnsupportedOperationException("tick labels are written, not read");
        }
    }
}
