package dev.gdasync.apps.gabench;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
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
import java.util.function.ToDoubleFunction;

/**
 * The plot of {@code --plot}: a panel per operation and layout (put contig, put strided, get contig, get strided), the
 * top row latency (µs per operation) and the bottom row bandwidth (MB/s) against patch size, both axes logarithmic, a
 * line per method. Drawn with Java2D into a PNG, headless, in the pingpong plot's style.
 */
final class BenchPlot {
    static final int PANEL_W = 420;
    static final int PANEL_H = 330;
    private static final int LEFT = 70;
    private static final int RIGHT = 16;
    private static final int TOP = 34;
    private static final int BOTTOM = 50;
    private static final int HEADER = 36;
    private static final List<String> PANELS = List.of("put contig", "put strided", "get contig", "get strided");
    private static final Map<String, Color> COLORS = Map.of("ga", new Color(0x1f77b4), "ga-reg", new Color(0xff7f0e),
            "raw", new Color(0x2ca02c), "mpj", new Color(0xd62728));

    static {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private BenchPlot() {
    }

    /** Draws the plot and writes it as a PNG (its folder must exist). */
    static void write(List<Row> rows, Path file) {
        BufferedImage img = render(rows);
        try (OutputStream out = Files.newOutputStream(file)) {
            if (!ImageIO.write(img, "png", out)) {
                throw new IllegalStateException("this JDK has no PNG writer");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the plot " + file + ": " + e, e);
        }
    }

    /**
     * @throws IllegalArgumentException if there is nothing to plot
     */
    static BufferedImage render(List<Row> rows) {
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no results to plot");
        }
        int width = PANELS.size() * PANEL_W;
        int height = HEADER + 2 * PANEL_H;
        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            String title = "gabench: global arrays vs raw window iput/iget vs MPJ Express, rank 0 to rank 1";
            g.drawString(title, (width - g.getFontMetrics().stringWidth(title)) / 2, 24);
            for (int p = 0; p < PANELS.size(); p++) {
                String panel = PANELS.get(p);
                List<Row> mine = rows.stream().filter(r -> r.panel().equals(panel)).toList();
                if (mine.isEmpty()) {
                    continue;
                }
                panel(g, mine, p * PANEL_W, HEADER, panel + ": latency", "\u00b5s per op", Row::medianMicros);
                panel(g, mine, p * PANEL_W, HEADER + PANEL_H, panel + ": bandwidth", "MB/s", Row::megabytesPerSecond);
            }
        } catch (Error e) {
            throw new IllegalStateException("drawing the plot failed (" + e + "); text needs a font: install fontconfig"
                    + " and a font package (Debian: fonts-dejavu-core)", e);
        } finally {
            g.dispose();
        }
        return img;
    }

    private static void panel(Graphics2D g, List<Row> rows, int ox, int oy, String title, String unit, ToDoubleFunction<Row> value) {
        Map<String, List<Row>> byMethod = new LinkedHashMap<>();
        for (String m : Report.METHODS) {
            List<Row> l = new ArrayList<>(rows.stream().filter(r -> r.method().equals(m) && value.applyAsDouble(r) > 0).toList());
            l.sort(Comparator.comparingInt(Row::bytes));
            if (!l.isEmpty()) {
                byMethod.put(m, l);
            }
        }
        List<Row> all = byMethod.values().stream().flatMap(List::stream).toList();
        if (all.isEmpty()) {
            return;
        }
        int x0 = (int) Math.floor(log2(all.stream().mapToInt(Row::bytes).min().orElseThrow()));
        int x1 = (int) Math.ceil(log2(all.stream().mapToInt(Row::bytes).max().orElseThrow()));
        if (x1 - x0 < 2) {
            x0--;
            x1++;
        }
        int y0 = (int) Math.floor(Math.log10(all.stream().mapToDouble(value).min().orElseThrow()));
        int y1 = (int) Math.ceil(Math.log10(all.stream().mapToDouble(value).max().orElseThrow()));
        if (y1 == y0) {
            y1++;
        }
        Axes a = new Axes(ox + LEFT, oy + TOP, PANEL_W - LEFT - RIGHT, PANEL_H - TOP - BOTTOM, x0, x1, y0, y1);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        FontMetrics fm = g.getFontMetrics();
        for (int d = y0; d <= y1; d++) {
            for (int m = 1; m <= 9; m++) {
                double v = m * Math.pow(10, d);
                if (Math.log10(v) > y1 + 1e-9) {
                    break;
                }
                int py = (int) Math.round(a.py(v));
                g.setColor(m == 1 ? new Color(0xcccccc) : new Color(0xeeeeee));
                g.drawLine(a.x, py, a.x + a.w, py);
                if (m == 1) {
                    String label = number(v);
                    g.setColor(Color.DARK_GRAY);
                    g.drawString(label, a.x - 5 - fm.stringWidth(label), py + fm.getAscent() / 2 - 1);
                }
            }
        }
        int step = Math.max(1, (int) Math.ceil((x1 - x0) / 6.0));
        for (int e = x0; e <= x1; e++) {
            int px = (int) Math.round(a.px(Math.pow(2, e)));
            boolean labelled = Math.floorMod(e, step) == 0;
            g.setColor(labelled ? new Color(0xcccccc) : new Color(0xeeeeee));
            g.drawLine(px, a.y, px, a.y + a.h);
            if (labelled) {
                String label = bytes(Math.pow(2, e));
                g.setColor(Color.DARK_GRAY);
                g.drawString(label, px - fm.stringWidth(label) / 2, a.y + a.h + fm.getAscent() + 5);
            }
        }
        g.setColor(Color.BLACK);
        g.drawRect(a.x, a.y, a.w, a.h);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        g.drawString(title + " (" + unit + ")", a.x, oy + TOP - 10);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        String xl = "patch size (bytes)";
        g.drawString(xl, a.x + (a.w - g.getFontMetrics().stringWidth(xl)) / 2, a.y + a.h + 36);
        int legendY = a.y + 8;
        for (Map.Entry<String, List<Row>> e : byMethod.entrySet()) {
            Color c = COLORS.getOrDefault(e.getKey(), Color.GRAY);
            g.setColor(c);
            g.setStroke(new BasicStroke(2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
            Path2D.Double line = new Path2D.Double();
            boolean first = true;
            for (Row r : e.getValue()) {
                double px = a.px(r.bytes());
                double py = a.py(value.applyAsDouble(r));
                if (first) {
                    line.moveTo(px, py);
                    first = false;
                } else {
                    line.lineTo(px, py);
                }
                g.fill(new Ellipse2D.Double(px - 3, py - 3, 6, 6));
            }
            g.draw(line);
            g.setStroke(new BasicStroke(1f));
            // The legend in the upper left: latency and bandwidth both start low at small sizes.
            g.drawLine(a.x + 8, legendY, a.x + 28, legendY);
            g.setColor(Color.BLACK);
            g.drawString(e.getKey(), a.x + 32, legendY + fm.getAscent() / 2 - 1);
            legendY += fm.getHeight();
        }
    }

    private record Axes(int x, int y, int w, int h, int x0, int x1, int y0, int y1) {
        double px(double bytes) {
            return x + (log2(bytes) - x0) / (x1 - x0) * w;
        }

        double py(double v) {
            return y + h - (Math.log10(v) - y0) / (y1 - y0) * h;
        }
    }

    private static double log2(double v) {
        return Math.log(v) / Math.log(2);
    }

    static String bytes(double b) {
        long v = Math.round(b);
        if (v >= 1 << 20 && v % (1 << 20) == 0) {
            return (v >> 20) + "M";
        }
        if (v >= 1024 && v % 1024 == 0) {
            return (v >> 10) + "K";
        }
        return String.valueOf(v);
    }

    static String number(double v) {
        if (v >= 1) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return java.math.BigDecimal.valueOf(v).round(new java.math.MathContext(1)).stripTrailingZeros().toPlainString();
    }
}
