package dev.gdasync.apps.nbc;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The plot of {@code --plot}: one column per collective; the top row the overlap (%, linear) and the bottom row the
 * pure communication time (µs, logarithmic) against the message size (logarithmic), a line per engine. Java2D,
 * headless, into a PNG.
 */
final class OverlapPlot {
    private static final int W = 400;
    private static final int H = 300;
    private static final int LEFT = 60;
    private static final int TOP = 50;
    private static final int PAD = 40;
    private static final Map<String, Color> COLORS = Map.of("host", new Color(0xd62728), "offload", new Color(0x1f77b4));

    static {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private OverlapPlot() {
    }

    static void write(List<OverlapRow> rows, Path file) {
        List<String> colls = rows.stream().map(OverlapRow::coll).distinct().toList();
        BufferedImage img = new BufferedImage(colls.size() * W, 2 * H + 30, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, img.getWidth(), img.getHeight());
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
            g.drawString("nbc-overlap: host progress engine vs offload (collective proxy), " + rows.getFirst().ranks()
                    + " ranks", 10, 20);
            for (int c = 0; c < colls.size(); c++) {
                String coll = colls.get(c);
                List<OverlapRow> mine = rows.stream().filter(r -> r.coll().equals(coll)).toList();
                panel(g, mine, c * W, 30, coll + ": overlap (%)", OverlapRow::overlap, false);
                panel(g, mine, c * W, 30 + H, coll + ": pure comm. (\u00b5s)", OverlapRow::pure, true);
            }
        } finally {
            g.dispose();
        }
        try {
            ImageIO.write(img, "png", file.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the plot " + file, e);
        }
    }

    private static void panel(Graphics2D g, List<OverlapRow> rows, int ox, int oy, String title,
                              ToDoubleFunction<OverlapRow> value, boolean logY) {
        int x = ox + LEFT;
        int y = oy + TOP;
        int w = W - LEFT - 20;
        int h = H - TOP - PAD;
        double xMin = Math.log(rows.stream().mapToLong(OverlapRow::bytes).min().orElse(1));
        double xMax = Math.log(rows.stream().mapToLong(OverlapRow::bytes).max().orElse(2));
        if (xMax <= xMin) {
            xMax = xMin + 1;
        }
        double yMin = logY ? Math.floor(Math.log10(Math.max(1e-3, rows.stream().mapToDouble(value).min().orElse(1)))) : 0;
        double yMax = logY ? Math.ceil(Math.log10(Math.max(1e-3, rows.stream().mapToDouble(value).max().orElse(10)))) : 100;
        if (yMax <= yMin) {
            yMax = yMin + 1;
        }
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        g.setColor(new Color(0xdddddd));
        int ticks = logY ? (int) (yMax - yMin) : 4;
        for (int t = 0; t <= ticks; t++) {
            double v = yMin + (yMax - yMin) * t / ticks;
            int py = y + h - (int) Math.round((v - yMin) / (yMax - yMin) * h);
            g.setColor(new Color(0xdddddd));
            g.drawLine(x, py, x + w, py);
            g.setColor(Color.DARK_GRAY);
            String label = logY ? String.format(Locale.ROOT, "%.0f", Math.pow(10, v)) : String.format(Locale.ROOT, "%.0f", v);
            g.drawString(label, x - 8 - g.getFontMetrics().stringWidth(label), py + 4);
        }
        for (long b : rows.stream().mapToLong(OverlapRow::bytes).distinct().sorted().toArray()) {
            int px = x + (int) Math.round((Math.log(b) - xMin) / (xMax - xMin) * w);
            String label = b >= 1 << 20 ? (b >> 20) + "M" : b >= 1024 ? (b >> 10) + "K" : Long.toString(b);
            g.drawString(label, px - g.getFontMetrics().stringWidth(label) / 2, y + h + 15);
        }
        g.setColor(Color.BLACK);
        g.drawRect(x, y, w, h);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 12));
        g.drawString(title, x, y - 10);
        int legend = y + 14;
        for (Map.Entry<String, Color> e : COLORS.entrySet().stream().sorted(Map.Entry.comparingByKey()).toList()) {
            List<OverlapRow> line = rows.stream().filter(r -> r.engine().equals(e.getKey())).toList();
            if (line.isEmpty()) {
                continue;
            }
            Path2D.Double p = new Path2D.Double();
            for (int i = 0; i < line.size(); i++) {
                OverlapRow r = line.get(i);
                double v = logY ? Math.log10(Math.max(1e-3, value.applyAsDouble(r))) : value.applyAsDouble(r);
                double px = x + (Math.log(r.bytes()) - xMin) / (xMax - xMin) * w;
                double py = y + h - (v - yMin) / (yMax - yMin) * h;
                if (i == 0) {
                    p.moveTo(px, py);
                } else {
                    p.lineTo(px, py);
                }
            }
            g.setColor(e.getValue());
            g.setStroke(new BasicStroke(2f));
            g.draw(p);
            g.setStroke(new BasicStroke(1f));
            g.drawLine(x + 8, legend, x + 28, legend);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            g.drawString(e.getKey(), x + 32, legend + 4);
            legend += 14;
        }
    }
}
