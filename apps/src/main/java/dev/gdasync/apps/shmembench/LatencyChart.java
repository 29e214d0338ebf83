package dev.gdasync.apps.shmembench;

import dev.gdasync.apps.shmemrun.Png;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The plot of {@code --plot}: a panel per operation with transfers (put, pingpong, get), µs per operation against
 * bytes, both axes logarithmic, a line per mode; the fetch-add's latencies in the title. Java2D into a PNG, headless.
 */
final class LatencyChart {
    static final String HEADER = "op,mode,bytes,us_per_op";
    private static final List<String> PANELS = List.of("put", "putnbi", "pingpong", "get");
    private static final int PANEL_W = 400;
    private static final int HEIGHT = 380;
    private static final int LEFT = 60;
    private static final int TOP = 60;
    private static final int BOTTOM = 50;
    private static final int RIGHT = 20;
    private static final Map<String, Color> COLORS = Map.of("host", new Color(0x1f77b4), "sa", new Color(0xd62728), "ki",
            new Color(0x2ca02c));

    /** One result: an operation in a mode at a size, µs per operation. */
    record Row(String op, String mode, int bytes, double micros) {
    }

    private LatencyChart() {
    }

    static void write(List<Row> rows, Path file) {
        int width = PANELS.size() * PANEL_W;
        BufferedImage img = Png.image(width, HEIGHT);
        Graphics2D g = Png.canvas(img);
        try {
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
            StringBuilder atomic = new StringBuilder();
            rows.stream().filter(r -> r.op().equals("atomic")).forEach(r -> atomic.append(
                    String.format(Locale.ROOT, "; fetch-add (%s) %.2f \u00b5s", r.mode(), r.micros())));
            g.drawString("shmembench: PE 0 to PE 1, \u00b5s per operation (host: CPU; sa: a host stream; ki: a KI block)"
                    + atomic, 10, 22);
            for (int p = 0; p < PANELS.size(); p++) {
                String op = PANELS.get(p);
                panel(g, rows.stream().filter(r -> r.op().equals(op)).toList(), p * PANEL_W, op);
            }
        } finally {
            g.dispose();
        }
        Png.write(img, file);
    }

    private static void panel(Graphics2D g, List<Row> rows, int ox, String op) {
        if (rows.isEmpty()) {
            return;
        }
        int w = PANEL_W - LEFT - RIGHT;
        int h = HEIGHT - TOP - BOTTOM;
        int x0 = ox + LEFT;
        double lx0 = Math.log(rows.stream().mapToInt(Row::bytes).min().orElse(1));
        double lx1 = Math.max(lx0 + 1, Math.log(rows.stream().mapToInt(Row::bytes).max().orElse(2)));
        double ly0 = Math.floor(Math.log10(rows.stream().mapToDouble(Row::micros).min().orElse(1)));
        double ly1 = Math.max(ly0 + 1, Math.ceil(Math.log10(rows.stream().mapToDouble(Row::micros).max().orElse(10))));
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 12));
        g.setColor(Color.BLACK);
        g.drawString(op + (op.equals("pingpong") ? " (half round trip)" : ""), x0, TOP - 12);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        for (double d = ly0; d <= ly1; d++) {
            int y = TOP + h - (int) Math.round(h * (d - ly0) / (ly1 - ly0));
            g.setColor(new Color(0xdddddd));
            g.drawLine(x0, y, x0 + w, y);
            g.setColor(Color.DARK_GRAY);
            g.drawString(String.format(Locale.ROOT, "%.3g", Math.pow(10, d)), ox + 8, y + 4);
        }
        for (long b = 1; b <= 1L << 30; b *= 4) {
            double lx = Math.log(b);
            if (lx >= lx0 - 1e-9 && lx <= lx1 + 1e-9) {
                int x = x0 + (int) Math.round(w * (lx - lx0) / (lx1 - lx0));
                g.drawString(b >= 1 << 20 ? (b >> 20) + "M" : b >= 1 << 10 ? (b >> 10) + "K" : String.valueOf(b), x - 8,
                        TOP + h + 16);
            }
        }
        g.drawString("bytes", x0 + w / 2 - 12, TOP + h + 34);
        g.setColor(Color.BLACK);
        g.drawRect(x0, TOP, w, h);
        int legend = 0;
        for (String mode : List.of("host", "sa", "ki")) {
            List<Row> line = rows.stream().filter(r -> r.mode().equals(mode)).toList();
            if (line.isEmpty()) {
                continue;
            }
            Path2D path = new Path2D.Double();
            for (int i = 0; i < line.size(); i++) {
                double x = x0 + w * (Math.log(line.get(i).bytes()) - lx0) / (lx1 - lx0);
                double y = TOP + h - h * (Math.log10(line.get(i).micros()) - ly0) / (ly1 - ly0);
                if (i == 0) {
                    path.moveTo(x, y);
                } else {
                    path.lineTo(x, y);
                }
            }
            g.setColor(COLORS.get(mode));
            g.setStroke(new BasicStroke(2f));
            g.draw(path);
            g.setStroke(new BasicStroke(1f));
            g.drawString(mode, x0 + 8, TOP + 16 + 14 * legend++);
        }
    }
}
