package dev.gdasync.apps.hpgmg;

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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The plot of {@code --plot}: time per solve against box size, one panel per rank count, one line per mode,
 * the time axis logarithmic and shared by the panels. Drawn with Java2D into a PNG, headless, from the rows of
 * the {@code --csv} file (every run appended so far), so runs on 2 and 4 ranks end up in one image.
 */
final class SolvePlot {
    static final int PANEL_WIDTH = 420;
    static final int HEIGHT = 480;

    private static final int LEFT = 78;
    private static final int GAP = 20;
    private static final int RIGHT = 20;
    private static final int TOP = 64;
    private static final int BOTTOM = 62;
    private static final Map<String, Color> COLORS = Map.of("mpj", new Color(0x2ca02c), "host", new Color(0x1f77b4),
            "sa", new Color(0xd62728), "ki", new Color(0x9467bd));

    static {
        // No display is needed (or wanted) to draw into an image.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    /** One CSV row: a mode's time per solve for one rank count and box size. */
    record Row(String mode, int ranks, int log2Box, double secondsPerSolve) {
    }

    private SolvePlot() {
    }

    /**
     * Reads the rows of a CSV written by {@code --csv}.
     *
     * @param csv the file
     * @return its rows
     * @throws IllegalArgumentException if the header is not {@link Summary#CSV_HEADER} or a row does not parse
     */
    static List<Row> read(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv);
        if (lines.isEmpty() || !lines.getFirst().equals(Summary.CSV_HEADER)) {
            throw new IllegalArgumentException(csv + " is not an hpgmg CSV: its first line is not '" + Summary.CSV_HEADER + "'");
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split(",");
            try {
                rows.add(new Row(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), Double.parseDouble(f[6])));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(csv + " line " + (i + 1) + ": not a row of mode,ranks,log2_box,...: '"
                        + lines.get(i) + "'", e);
            }
        }
        return rows;
    }

    /**
     * Draws the rows and writes a PNG. Rows of the same mode, ranks and box size (runs repeated) are averaged.
     *
     * @param rows the results
     * @param file where
     */
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
     * Draws the rows.
     *
     * @param rows the results
     * @return the image, {@link #PANEL_WIDTH} wide per rank count
     * @throws IllegalArgumentException if there is nothing to plot or a time is not positive
     */
    static BufferedImage render(List<Row> rows) {
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no results to plot");
        }
        // ranks -> mode -> log2 box -> mean seconds
        Map<Integer, Map<String, TreeMap<Integer, double[]>>> data = new TreeMap<>();
        List<String> modes = new ArrayList<>();
        for (Row r : rows) {
            if (!(r.secondsPerSolve() > 0)) {
                throw new IllegalArgumentException("cannot plot a time of " + r.secondsPerSolve() + " s on a log axis (" + r + ")");
            }
            double[] sum = data.computeIfAbsent(r.ranks(), k -> new TreeMap<>())
                    .computeIfAbsent(r.mode(), k -> new TreeMap<>())
                    .computeIfAbsent(r.log2Box(), k -> new double[2]);
            sum[0] += r.secondsPerSolve();
            sum[1]++;
            if (!modes.contains(r.mode())) {
                modes.add(r.mode());
            }
        }
        modes.sort(Comparator.comparingInt(m -> List.of("mpj", "host", "sa", "ki").indexOf(m) & 0xff));
        int x0 = rows.stream().mapToInt(Row::log2Box).min().orElseThrow();
        int x1 = rows.stream().mapToInt(Row::log2Box).max().orElseThrow();
        double minT = rows.stream().mapToDouble(Row::secondsPerSolve).min().orElseThrow();
        double maxT = rows.stream().mapToDouble(Row::secondsPerSolve).max().orElseThrow();
        int y0 = (int) Math.floor(Math.log10(minT));
        int y1 = (int) Math.ceil(Math.log10(maxT));
        if (y1 == y0) {
            y1++;
        }
        int panels = data.size();
        int panelW = PANEL_WIDTH - GAP;
        int width = LEFT + panels * PANEL_WIDTH - GAP + RIGHT;
        BufferedImage img = new BufferedImage(width, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, HEIGHT);
            int p = 0;
            for (Map.Entry<Integer, Map<String, TreeMap<Integer, double[]>>> e : data.entrySet()) {
                Axes ax = new Axes(LEFT + p * PANEL_WIDTH, TOP, panelW, HEIGHT - TOP - BOTTOM, x0, Math.max(x1, x0 + 1), y0, y1);
                drawPanel(g, ax, e.getKey(), e.getValue(), p == 0);
                p++;
            }
            drawLegend(g, modes, LEFT + 12, TOP + 12);
            drawTitles(g, width);
        } catch (Error e) {
            // Headless JDKs without any font installed fail here, not earlier.
            throw new IllegalStateException("drawing the plot failed (" + e + "); text needs a font: install fontconfig"
                    + " and a font package (Debian: fonts-dejavu-core)", e);
        } finally {
            g.dispose();
        }
        return img;
    }

    /** A panel's area; x linear in log2 box, y logarithmic in seconds. */
    private record Axes(int x, int y, int w, int h, int x0, int x1, int y0, int y1) {
        double px(int log2Box) {
            return x + 24 + (double) (log2Box - x0) / (x1 - x0) * (w - 48);
        }

        double py(double seconds) {
            return y + h - (Math.log10(seconds) - y0) / (y1 - y0) * h;
        }
    }

    private static void drawPanel(Graphics2D g, Axes a, int ranks, Map<String, TreeMap<Integer, double[]>> byMode,
                                  boolean yLabels) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        FontMetrics fm = g.getFontMetrics();
        for (int d = a.y0; d <= a.y1; d++) {
            for (int m = 1; m <= 9; m++) {
                double v = m * Math.pow(10, d);
                if (Math.log10(v) > a.y1 + 1e-9) {
                    break;
                }
                int py = (int) Math.round(a.py(v));
                g.setColor(m == 1 ? new Color(0xcccccc) : new Color(0xeeeeee));
                g.drawLine(a.x, py, a.x + a.w, py);
                if (m == 1 && yLabels) {
                    String label = seconds(v);
                    g.setColor(Color.DARK_GRAY);
                    g.drawString(label, a.x - 6 - fm.stringWidth(label), py + fm.getAscent() / 2 - 1);
                }
            }
        }
        for (int e = a.x0; e <= a.x1; e++) {
            int px = (int) Math.round(a.px(e));
            g.setColor(new Color(0xcccccc));
            g.drawLine(px, a.y, px, a.y + a.h);
            String label = (1 << e) + "\u00b3";
            g.setColor(Color.DARK_GRAY);
            g.drawString(label, px - fm.stringWidth(label) / 2, a.y + a.h + fm.getAscent() + 6);
        }
        g.setColor(Color.BLACK);
        g.drawRect(a.x, a.y, a.w, a.h);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        String title = ranks + (ranks == 1 ? " rank" : " ranks");
        g.drawString(title, a.x + (a.w - g.getFontMetrics().stringWidth(title)) / 2, a.y - 8);
        g.setStroke(new BasicStroke(2.2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
        for (Map.Entry<String, TreeMap<Integer, double[]>> e : byMode.entrySet()) {
            g.setColor(color(e.getKey()));
            Path2D.Double line = new Path2D.Double();
            boolean first = true;
            for (Map.Entry<Integer, double[]> pt : e.getValue().entrySet()) {
                double px = a.px(pt.getKey()), py = a.py(pt.getValue()[0] / pt.getValue()[1]);
                if (first) {
                    line.moveTo(px, py);
                    first = false;
                } else {
                    line.lineTo(px, py);
                }
                g.fill(new Ellipse2D.Double(px - 4, py - 4, 8, 8));
            }
            g.draw(line);
        }
        g.setStroke(new BasicStroke(1f));
    }

    private static Color color(String mode) {
        return COLORS.getOrDefault(mode, new Color(0xff7f0e));
    }

    private static void drawLegend(Graphics2D g, List<String> modes, int bx, int by) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        FontMetrics fm = g.getFontMetrics();
        int rowH = fm.getHeight() + 4;
        int textW = modes.stream().mapToInt(fm::stringWidth).max().orElse(0);
        int boxW = 12 + 28 + 8 + textW + 12;
        int boxH = 8 + rowH * modes.size() + 4;
        g.setColor(new Color(255, 255, 255, 235));
        g.fillRect(bx, by, boxW, boxH);
        g.setColor(Color.GRAY);
        g.drawRect(bx, by, boxW, boxH);
        for (int i = 0; i < modes.size(); i++) {
            int cy = by + 8 + i * rowH + rowH / 2;
            g.setColor(color(modes.get(i)));
            g.setStroke(new BasicStroke(2.2f));
            g.drawLine(bx + 12, cy, bx + 40, cy);
            g.fill(new Ellipse2D.Double(bx + 26 - 4, cy - 4, 8, 8));
            g.setStroke(new BasicStroke(1f));
            g.setColor(Color.BLACK);
            g.drawString(modes.get(i), bx + 48, cy + fm.getAscent() / 2 - 1);
        }
    }

    private static void drawTitles(Graphics2D g, int width) {
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        FontMetrics fm = g.getFontMetrics();
        String title = "hpgmg: time per F-cycle solve vs box size";
        g.drawString(title, (width - fm.stringWidth(title)) / 2, 24);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        fm = g.getFontMetrics();
        String xl = "box size (cells per box)";
        g.drawString(xl, (width - fm.stringWidth(xl)) / 2, HEIGHT - 14);
        String yl = "seconds per solve (log scale)";
        AffineTransform saved = g.getTransform();
        g.rotate(-Math.PI / 2);
        g.drawString(yl, -(TOP + (HEIGHT - TOP - BOTTOM + fm.stringWidth(yl)) / 2), 20);
        g.setTransform(saved);
    }

    /** @return a time label without trailing zeros: 0.001, 0.01, 0.1, 1, 10 */
    static String seconds(double v) {
        if (v >= 1) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return java.math.BigDecimal.valueOf(v).round(new java.math.MathContext(1)).stripTrailingZeros().toPlainString();
    }
}
