package dev.gdasync.apps.comd;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The benchmark plot: one group of bars per case (potential, ranks, size), one bar per mode, each bar stacked from the
 * force, redistribution, exchange and remaining time of a step, in percent of the case's mpj step (of its first mode
 * without mpj), so cases of any size share one axis; the mpj time per step is written under each group. Drawn with
 * Java2D into a PNG, headless, as the ping-pong's plot.
 */
final class StepPlot {
    /** The width of a plot of few cases; more cases widen it. */
    static final int WIDTH = 1000;
    /** The least width of a case's group of bars. */
    private static final int MIN_GROUP = 120;
    static final int HEIGHT = 560;
    private static final int LEFT = 70;
    private static final int RIGHT = 150;
    private static final int TOP = 50;
    private static final int BOTTOM = 90;
    private static final Color[] PARTS = {new Color(0x1f77b4), new Color(0x2ca02c), new Color(0xd62728), new Color(0xbbbbbb)};
    private static final String[] PART_NAMES = {"force", "redistribution", "exchange", "other"};

    static {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private StepPlot() {
    }

    static void write(List<ComdCsv.Row> rows, Path file) {
        Map<String, List<ComdCsv.Row>> cases = new LinkedHashMap<>();
        for (ComdCsv.Row r : rows) {
            List<ComdCsv.Row> c = cases.computeIfAbsent(r.caseLabel(), k -> new ArrayList<>());
            c.removeIf(x -> x.mode().equals(r.mode())); // a later run of a case replaces the earlier one
            c.add(r);
        }
        int width = width(cases.size());
        BufferedImage img = new BufferedImage(width, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            draw(g, cases, width);
        } finally {
            g.dispose();
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            ImageIO.write(img, "png", out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** @return the image width for this many cases */
    static int width(int cases) {
        return Math.max(WIDTH, LEFT + RIGHT + cases * MIN_GROUP);
    }

    private static void draw(Graphics2D g, Map<String, List<ComdCsv.Row>> cases, int width) {
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, HEIGHT);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        center(g, "CoMD time per step by communication model (100 % = the case's mpj step)", width / 2, 28);
        int plotW = width - LEFT - RIGHT;
        int plotH = HEIGHT - TOP - BOTTOM;
        double max = 100;
        for (List<ComdCsv.Row> c : cases.values()) {
            double base = base(c);
            for (ComdCsv.Row r : c) {
                max = Math.max(max, 100 * r.stepMs() / base);
            }
        }
        max = Math.ceil(max / 20) * 20;
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (double v = 0; v <= max + 1e-9; v += 20) {
            int y = TOP + plotH - (int) Math.round(plotH * v / max);
            g.setColor(new Color(0xe5e5e5));
            g.drawLine(LEFT, y, LEFT + plotW, y);
            g.setColor(Color.BLACK);
            String s = String.format(Locale.ROOT, "%.0f %%", v);
            g.drawString(s, LEFT - 8 - g.getFontMetrics().stringWidth(s), y + 4);
        }
        g.setStroke(new BasicStroke(1f));
        g.drawLine(LEFT, TOP, LEFT, TOP + plotH);
        g.drawLine(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH);
        int groups = Math.max(1, cases.size());
        double groupW = (double) plotW / groups;
        int gi = 0;
        for (Map.Entry<String, List<ComdCsv.Row>> e : cases.entrySet()) {
            List<ComdCsv.Row> c = e.getValue();
            double base = base(c);
            double barW = Math.min(34, groupW * 0.85 / c.size());
            double x0 = LEFT + gi * groupW + (groupW - barW * c.size()) / 2;
            for (int k = 0; k < c.size(); k++) {
                ComdCsv.Row r = c.get(k);
                double other = Math.max(0, r.stepMs() - r.forceMs() - r.redistributeMs() - r.exchangeMs());
                double[] parts = {r.forceMs(), r.redistributeMs(), r.exchangeMs(), other};
                double acc = 0;
                int x = (int) Math.round(x0 + k * barW);
                int w = (int) Math.max(1, Math.round(barW) - 2);
                for (int p = 0; p < parts.length; p++) {
                    int yTop = TOP + plotH - (int) Math.round(plotH * 100 * (acc + parts[p]) / base / max);
                    int yBot = TOP + plotH - (int) Math.round(plotH * 100 * acc / base / max);
                    g.setColor(PARTS[p]);
                    g.fillRect(x, yTop, w, Math.max(0, yBot - yTop));
                    acc += parts[p];
                }
                g.setColor(Color.BLACK);
                g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
                int yEnd = TOP + plotH - (int) Math.round(plotH * 100 * r.stepMs() / base / max);
                center(g, r.mode(), x + w / 2, yEnd - 4);
            }
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            int cx = (int) Math.round(LEFT + gi * groupW + groupW / 2);
            center(g, e.getKey(), cx, TOP + plotH + 18);
            center(g, String.format(Locale.ROOT, "100 %% = %.2f ms", base), cx, TOP + plotH + 34);
            gi++;
        }
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        int ly = TOP + 10;
        for (int p = 0; p < PARTS.length; p++) {
            g.setColor(PARTS[p]);
            g.fillRect(width - RIGHT + 16, ly + 22 * p, 14, 14);
            g.setColor(Color.BLACK);
            g.drawString(PART_NAMES[p], width - RIGHT + 36, ly + 22 * p + 12);
        }
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        center(g, "case: potential, ranks, unit cells (4 atoms each); bars: mpj, host, sa, ki as run", LEFT + plotW / 2, HEIGHT - 20);
    }

    private static double base(List<ComdCsv.Row> c) {
        for (ComdCsv.Row r : c) {
            if (r.mode().equals("mpj")) {
                return r.stepMs();
            }
        }
        return c.getFirst().stepMs();
    }

    private static void center(Graphics2D g, String s, int x, int y) {
        FontMetrics fm = g.getFontMetrics();
        g.drawString(s, x - fm.stringWidth(s) / 2, y);
    }
}
