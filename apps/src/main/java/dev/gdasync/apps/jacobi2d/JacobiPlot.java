package dev.gdasync.apps.jacobi2d;

import dev.gdasync.apps.shmemrun.Png;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The plot of {@code --plot}: one group of bars per case (mesh, PEs), one bar per mode, the height the time per
 * iteration in ms on one axis, its value written over it. Drawn with Java2D into a PNG, headless, from
 * every row of the {@code --csv} file (a later run of a case and mode replaces an earlier one).
 */
final class JacobiPlot {
    static final String HEADER = "mode,pes,nx,ny,iterations,seconds,ms_per_iteration,equal";
    static final int HEIGHT = 480;
    private static final int GROUP = 190;
    private static final int LEFT = 70;
    private static final int TOP = 50;
    private static final int BOTTOM = 70;
    private static final Map<String, Color> COLORS = Map.of("host", new Color(0x1f77b4), "sa", new Color(0xd62728), "ki",
            new Color(0x2ca02c));

    /** One CSV row. */
    record Row(String mode, int pes, int nx, int ny, int iterations, double msPerIteration) {
        String caseLabel() {
            return ny + "x" + nx + ", " + pes + " PE" + (pes == 1 ? "" : "s");
        }
    }

    private JacobiPlot() {
    }

    /** @return the rows of a CSV written by {@code --csv} */
    static List<Row> read(Path csv) {
        try {
            List<Row> rows = new ArrayList<>();
            for (String line : Files.readAllLines(csv)) {
                if (line.isBlank() || line.startsWith("mode,")) {
                    continue;
                }
                String[] f = line.split(",");
                rows.add(new Row(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                        Integer.parseInt(f[4]), Double.parseDouble(f[6])));
            }
            return rows;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + csv + ": " + e, e);
        }
    }

    /** Draws the plot into a PNG. */
    static void write(List<Row> rows, Path file) {
        Map<String, Map<String, Double>> cases = new LinkedHashMap<>();
        for (Row r : rows) {
            Map<String, Double> c = cases.computeIfAbsent(r.caseLabel(), k -> new LinkedHashMap<>());
            c.put(r.mode(), r.msPerIteration());
        }
        if (cases.isEmpty()) {
            throw new IllegalArgumentException("no results to plot");
        }
        double max = cases.values().stream().flatMap(m -> m.values().stream()).mapToDouble(Double::doubleValue).max()
                .orElse(1);
        int width = LEFT + 20 + GROUP * cases.size();
        BufferedImage img = Png.image(width, HEIGHT);
        Graphics2D g = Png.canvas(img);
        try {
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
            g.drawString("jacobi2d: ms per iteration (lower is better)", LEFT, 24);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            int plotH = HEIGHT - TOP - BOTTOM;
            g.drawLine(LEFT, TOP, LEFT, TOP + plotH);
            g.drawLine(LEFT, TOP + plotH, width - 10, TOP + plotH);
            for (int t = 0; t <= 4; t++) {
                double v = max * t / 4;
                int y = TOP + plotH - (int) (plotH * t / 4.0);
                g.drawString(String.format(Locale.ROOT, "%.2f", v), 8, y + 4);
                g.setColor(new Color(0xdddddd));
                g.drawLine(LEFT + 1, y, width - 10, y);
                g.setColor(Color.BLACK);
            }
            int x = LEFT + 20;
            for (Map.Entry<String, Map<String, Double>> c : cases.entrySet()) {
                int bars = c.getValue().size();
                int bw = (GROUP - 30) / bars;
                int bx = x;
                for (Map.Entry<String, Double> bar : c.getValue().entrySet()) {
                    int h = (int) Math.round(plotH * bar.getValue() / max);
                    g.setColor(COLORS.getOrDefault(bar.getKey(), Color.DARK_GRAY));
                    g.fillRect(bx, TOP + plotH - h, bw - 6, h);
                    g.setColor(Color.BLACK);
                    g.drawString(String.format(Locale.ROOT, "%.2f", bar.getValue()), bx, TOP + plotH - h - 4);
                    g.drawString(bar.getKey(), bx, TOP + plotH + 14);
                    bx += bw;
                }
                g.drawString(c.getKey(), x, TOP + plotH + 34);
                x += GROUP;
            }
        } finally {
            g.dispose();
        }
        Png.write(img, file);
    }
}
