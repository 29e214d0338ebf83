package dev.gdasync.apps.pingpong;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The latency-vs-size plot of {@code --plot}: one line per mode, one-way latency against message size,
 * both axes logarithmic, with a legend and axis labels. Drawn with Java2D into a PNG, headless. The message rate's
 * plot is the same drawing of other values ({@link #write(List, String, String, Path)}).
 */
public final class LatencyPlot {
    /** Width of the image in pixels. */
    public static final int WIDTH = 800;
    /** Height of the image in pixels. */
    public static final int HEIGHT = 500;

    private static final int LEFT = 78;
    private static final int RIGHT = 24;
    private static final int TOP = 44;
    private static final int BOTTOM = 62;
    private static final Map<String, Color> COLORS = Map.of(
            "host", new Color(0x1f77b4), "sa", new Color(0xd62728), "mpj", new Color(0x2ca02c), "jucx", new Color(0x9467bd),
            "floor", new Color(0x555555), "ompi", new Color(0xe377c2), "ucx", new Color(0xbcbd22));
    private static final Color[] OTHER = {new Color(0xff7f0e), new Color(0x8c564b), new Color(0x17becf),
            new Color(0x393b79), new Color(0xad494a), new Color(0x637939), new Color(0x7b4173), new Color(0x8c6d31)};

    static {
        // No display is needed (or wanted) to draw into an image.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private LatencyPlot() {
    }

    /**
     * Draws the plot and writes it as a PNG. Its folder must exist (the command line checked it): no folder is made.
     *
     * @param rows the results (rows of one mode form its line, in size order)
     * @param file where
     */
    public static void write(List<Result> rows, Path file) {
        writePng(render(rows, WIDTH, HEIGHT), file);
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
        writePng(render(points, WIDTH, HEIGHT, title, yLabel), file);
    }

    private static void writePng(BufferedImage img, Path file) {
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
        Map<String, List<Point>> byMode = new LinkedHashMap<>();
        for (Point r : rows) {
            if (!(r.value() > 0)) {
                throw new IllegalArgumentException("cannot plot " + r.value() + " on a log axis (" + r + ")");
            }
            byMode.computeIfAbsent(r.line(), k -> new ArrayList<>()).add(r);
        }
        byMode.values().forEach(l -> l.sort(Comparator.comparingInt(Point::bytes)));
        double minB = rows.stream().mapToInt(Point::bytes).min().orElseThrow();
        double maxB = rows.stream().mapToInt(Point::bytes).max().orElseThrow();
        double minL = rows.stream().mapToDouble(Point::value).min().orElseThrow();
        double maxL = rows.stream().mapToDouble(Point::value).max().orElseThrow();
        int x0 = (int) Math.floor(log2(minB));
        int x1 = (int) Math.ceil(log2(maxB));
        if (x1 - x0 < 2) {
            x0 -= 1;
            x1 += 1;
        }
        int y0 = (int) Math.floor(Math.log10(minL));
        int y1 = (int) Math.ceil(Math.log10(maxL));
        if (y1 == y0) {
            y1++;
        }
        Axes ax = new Axes(LEFT, TOP, width - LEFT - RIGHT, height - TOP - BOTTOM, x0, x1, y0, y1);

        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            drawGrid(g, ax);
            Map<String, Color> palette = palette(byMode.keySet());
            drawLines(g, ax, byMode, palette);
            drawLegend(g, ax, palette);
            drawLabels(g, ax, width, height, title, yLabel);
        } catch (Error e) {
            // Headless JDKs without any font installed fail here, not earlier.
            throw new IllegalStateException("drawing the plot failed (" + e + "); text needs a font: install fontconfig"
                    + " and a font package (Debian: fonts-dejavu-core)", e);
        } finally {
            g.dispose();
        }
        return img;
    }

    private static double log2(double v) {
        return Math.log(v) / Math.log(2);
    }

    /** The plot area and its logarithmic scales. */
    private record Axes(int x, int y, int w, int h, int x0, int x1, int y0, int y1) {
        double px(double bytes) {
            return x + (log2(bytes) - x0) / (x1 - x0) * w;
        }

        double py(double micros) {
            return y + h - (Math.log10(micros) - y0) / (y1 - y0) * h;
        }
    }

    private static void drawGrid(Graphics2D g, Axes a) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        FontMetrics fm = g.getFontMetrics();
        Color minor = new Color(0xeeeeee);
        Color major = new Color(0xcccccc);
        // y: decades labelled, 2..9 as light lines
        for (int d = a.y0; d <= a.y1; d++) {
            for (int m = 1; m <= 9; m++) {
                double v = m * Math.pow(10, d);
                if (Math.log10(v) > a.y1 + 1e-9) {
                    break;
                }
                int py = (int) Math.round(a.py(v));
                g.setColor(m == 1 ? major : minor);
                g.drawLine(a.x, py, a.x + a.w, py);
                if (m == 1) {
                    String label = micros(v);
                    g.setColor(Color.DARK_GRAY);
                    g.drawString(label, a.x - 6 - fm.stringWidth(label), py + fm.getAscent() / 2 - 1);
                }
            }
        }
        // x: powers of two, every step-th labelled so that at most about 10 labels show
        int step = Math.max(1, (int) Math.ceil((a.x1 - a.x0) / 10.0));
        for (int e = a.x0; e <= a.x1; e++) {
            int px = (int) Math.round(a.px(Math.pow(2, e)));
            boolean labelled = Math.floorMod(e, step) == 0; // 1 KiB, 1 MiB, ... whenever they are on the axis
            g.setColor(labelled ? major : minor);
            g.drawLine(px, a.y, px, a.y + a.h);
            if (labelled) {
                String label = bytes(Math.pow(2, e));
                g.setColor(Color.DARK_GRAY);
                g.drawString(label, px - fm.stringWidth(label) / 2, a.y + a.h + fm.getAscent() + 6);
            }
        }
        g.setColor(Color.BLACK);
        g.drawRect(a.x, a.y, a.w, a.h);
    }

    private static void drawLines(Graphics2D g, Axes a, Map<String, List<Point>> byMode, Map<String, Color> palette) {
        g.setStroke(new BasicStroke(2.2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
        for (Map.Entry<String, List<Point>> e : byMode.entrySet()) {
            g.setColor(palette.get(e.getKey()));
            Path2D.Double line = new Path2D.Double();
            boolean first = true;
            for (Point r : e.getValue()) {
                double px = a.px(r.bytes());
                double py = a.py(r.value());
                if (first) {
                    line.moveTo(px, py);
                    first = false;
                } else {
                    line.lineTo(px, py);
                }
            }
            g.draw(line);
            for (Point r : e.getValue()) {
                g.fill(new Ellipse2D.Double(a.px(r.bytes()) - 4, a.py(r.value()) - 4, 8, 8));
            }
        }
        g.setStroke(new BasicStroke(1f));
    }

    private static void drawLegend(Graphics2D g, Axes a, Map<String, Color> palette) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        FontMetrics fm = g.getFontMetrics();
        List<String> names = new ArrayList<>(palette.keySet());
        int rowH = fm.getHeight() + 4;
        int textW = names.stream().mapToInt(fm::stringWidth).max().orElse(0);
        int boxW = 12 + 28 + 8 + textW + 12;
        int boxH = 8 + rowH * names.size() + 4;
        int bx = a.x + 12;
        int by = a.y + 12;
        g.setColor(new Color(255, 255, 255, 235));
        g.fillRect(bx, by, boxW, boxH);
        g.setColor(Color.GRAY);
        g.drawRect(bx, by, boxW, boxH);
        for (int i = 0; i < names.size(); i++) {
            int cy = by + 8 + i * rowH + rowH / 2;
            g.setColor(palette.get(names.get(i)));
            g.setStroke(new BasicStroke(2.2f));
            g.drawLine(bx + 12, cy, bx + 40, cy);
            g.fill(new Ellipse2D.Double(bx + 26 - 4, cy - 4, 8, 8));
            g.setStroke(new BasicStroke(1f));
            g.setColor(Color.BLACK);
            g.drawString(names.get(i), bx + 48, cy + fm.getAscent() / 2 - 1);
        }
    }

    private static void drawLabels(Graphics2D g, Axes a, int width, int height, String title, String yl) {
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        FontMetrics fm = g.getFontMetrics();
        g.drawString(title, a.x + (a.w - fm.stringWidth(title)) / 2, 28);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        fm = g.getFontMetrics();
        String xl = "message size (bytes, log scale)";
        g.drawString(xl, a.x + (a.w - fm.stringWidth(xl)) / 2, height - 14);
        AffineTransform saved = g.getTransform();
        g.rotate(-Math.PI / 2);
        g.drawString(yl, -(a.y + (a.h + fm.stringWidth(yl)) / 2), 20);
        g.setTransform(saved);
    }

    /**
     * The colours of the plot's lines, for other drawings of the same modes.
     *
     * @param modes the lines' names, in order
     * @return each one's colour, in that order: fixed colours for host, sa, mpj, jucx and the C peers, the others in
     * turn
     */
    public static Map<String, Color> palette(Iterable<String> modes) {
        Map<String, Color> out = new LinkedHashMap<>();
        int other = 0;
        for (String m : modes) {
            Color c = COLORS.get(m);
            out.put(m, c != null ? c : OTHER[other++ % OTHER.length]);
        }
        return out;
    }

    /** @return a size label: 8 B, 4 KiB, 1 MiB */
    static String bytes(double b) {
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
     * @param v a time in microseconds, a power of ten
     * @return its axis label without trailing zeros: 0.01, 0.1, 1, 10, 100
     */
    public static String micros(double v) {
        if (v >= 1) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return java.math.BigDecimal.valueOf(v).round(new java.math.MathContext(1)).stripTrailingZeros().toPlainString();
    }
}
