package dev.gdasync.apps.collectives;

import dev.gdasync.apps.pingpong.LatencyPlot;
import dev.gdasync.apps.shmemrun.Png;

import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The barrier's plot: it has no size to draw a curve against, so one horizontal bar per method, its length the median
 * time on a logarithmic axis, the time and the ratio to Open MPI's written beside it, in the colours of the other
 * collectives' plots ({@link LatencyPlot#palette}).
 */
final class BarrierChart {
    private static final int WIDTH = LatencyPlot.WIDTH;
    private static final int LEFT = 110;
    private static final int RIGHT = 150;
    private static final int TOP = 50;
    private static final int BOTTOM = 56;
    private static final int BAR = 26;

    private BarrierChart() {
    }

    /**
     * @param rows  the barrier's rows, a bar each, in order
     * @param title the title
     * @param file  where; its folder must exist
     */
    static void write(List<BenchRow> rows, String title, Path file) {
        int height = TOP + BOTTOM + rows.size() * (BAR + 12);
        BufferedImage img = Png.image(WIDTH, height);
        Graphics2D g = Png.canvas(img);
        try {
            draw(g, rows, title, height);
        } catch (Error e) {
            // Headless JDKs without any font installed fail here, not earlier.
            throw new IllegalStateException("drawing the plot failed (" + e + "); text needs a font: install fontconfig"
                    + " and a font package (Debian: fonts-dejavu-core)", e);
        } finally {
            g.dispose();
        }
        Png.write(img, file);
    }

    private static void draw(Graphics2D g, List<BenchRow> rows, String title, int height) {
        double min = rows.stream().mapToDouble(BenchRow::medianMicros).min().orElse(1);
        double max = rows.stream().mapToDouble(BenchRow::medianMicros).max().orElse(10);
        int d0 = (int) Math.floor(Math.log10(min));
        int d1 = Math.max(d0 + 1, (int) Math.ceil(Math.log10(max)));
        int w = WIDTH - LEFT - RIGHT;
        int h = height - TOP - BOTTOM;
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        center(g, title, WIDTH / 2, 28);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        FontMetrics fm = g.getFontMetrics();
        // The axis starts one decade below the fastest so that its bar has a length.
        int start = d0 - 1;
        for (int d = start; d <= d1; d++) {
            int x = LEFT + (int) Math.round((double) (d - start) / (d1 - start) * w);
            g.setColor(new Color(0xcccccc));
            g.drawLine(x, TOP, x, TOP + h);
            g.setColor(Color.DARK_GRAY);
            String label = LatencyPlot.micros(Math.pow(10, d));
            g.drawString(label, x - fm.stringWidth(label) / 2, TOP + h + fm.getAscent() + 6);
        }
        Map<String, Color> palette = LatencyPlot.palette(rows.stream().map(BenchRow::method).toList());
        for (int i = 0; i < rows.size(); i++) {
            BenchRow r = rows.get(i);
            int y = TOP + 6 + i * (BAR + 12);
            int len = (int) Math.round((Math.log10(r.medianMicros()) - start) / (d1 - start) * w);
            g.setColor(palette.get(r.method()));
            g.fillRect(LEFT, y, Math.max(1, len), BAR);
            g.setColor(Color.BLACK);
            g.drawString(r.method(), LEFT - 8 - fm.stringWidth(r.method()), y + BAR / 2 + fm.getAscent() / 2 - 1);
            String value = String.format(Locale.ROOT, "%.2f \u00b5s", r.medianMicros())
                    + BenchReport.xOmpi(rows, r).map(x -> " (" + BenchReport.ratio(x) + "x ompi)").orElse("");
            g.drawString(value, LEFT + Math.max(1, len) + 6, y + BAR / 2 + fm.getAscent() / 2 - 1);
        }
        g.setColor(Color.BLACK);
        g.drawRect(LEFT, TOP, w, h);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        center(g, "time per barrier (\u00b5s, log scale), median of the reps", LEFT + w / 2, height - 14);
    }

    private static void center(Graphics2D g, String s, int x, int y) {
        g.drawString(s, x - g.getFontMetrics().stringWidth(s) / 2, y);
    }
}
