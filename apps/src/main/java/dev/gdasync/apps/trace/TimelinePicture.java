package dev.gdasync.apps.trace;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Draws a stretch of a {@link Timeline} as a PNG, headless (Java2D), in the layout Perfetto shows: a row per thread,
 * grouped by rank; spans as boxes (nested spans below their parent), instants as triangles with their name, flows as
 * arrows from a cause's start to its effect's start, and a time axis in microseconds. It is how the documentation
 * shows a trace where no browser is at hand.
 */
final class TimelinePicture {
    private static final int WIDTH = 1800;
    private static final int LEFT = 300;
    private static final int RIGHT = 20;
    private static final int TOP = 70;
    private static final int LEVEL = 20;
    private static final int INSTANT_BAND = 30;
    private static final int RANK_GAP = 26;
    private static final Map<String, Color> COLORS = Map.of(
            "stream", new Color(0x4e79a7), "doorbell", new Color(0xf28e2b), "nic", new Color(0x59a14f),
            "cpu", new Color(0xb07aa1), "libmp", new Color(0x9c755f), "ki", new Color(0x76b7b2),
            "failure", new Color(0xe15759), "other", new Color(0xbab0ac));
    private static final Color DOORBELL_FLOW = new Color(0xf28e2b);
    private static final Color MESSAGE_FLOW = new Color(0xd62728);

    private TimelinePicture() {
    }

    /** A track's row: where it is drawn and its spans' nesting levels. */
    private static final class Row {
        final Timeline.Track track;
        final List<Timeline.Item> spans = new ArrayList<>();
        final List<Timeline.Item> instants = new ArrayList<>();
        final Map<Timeline.Item, Integer> level = new LinkedHashMap<>();
        int levels = 1;
        int y;

        Row(Timeline.Track track) {
            this.track = track;
        }

        int height() {
            return INSTANT_BAND + levels * LEVEL + 8;
        }
    }

    /**
     * @param timeline the timeline
     * @param from     the picture's start, in nanoseconds since the epoch
     * @param to       its end
     * @param title    its title
     * @param file     the PNG to write
     * @throws IllegalArgumentException if the stretch is empty or holds no event
     * @throws UncheckedIOException     if the file cannot be written
     */
    static void write(Timeline timeline, long from, long to, String title, Path file) {
        if (to <= from) {
            throw new IllegalArgumentException("the picture's stretch is empty");
        }
        Map<Timeline.Track, Row> rows = new LinkedHashMap<>();
        for (Timeline.Track t : timeline.tracks()) {
            rows.put(t, new Row(t));
        }
        for (Timeline.Item i : timeline.items()) {
            TimelineEvent e = i.event();
            if (e.endNanos() < from || e.startNanos() > to) {
                continue;
            }
            Row r = rows.get(i.track());
            (i.shape() == Timeline.Shape.SPAN ? r.spans : r.instants).add(i);
        }
        rows.values().removeIf(r -> r.spans.isEmpty() && r.instants.isEmpty());
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no event in the picture's stretch");
        }
        for (Row r : rows.values()) {
            nest(r);
        }
        int y = TOP;
        int lastRank = Integer.MIN_VALUE;
        for (Row r : rows.values()) {
            if (r.track.rank() != lastRank) {
                y += RANK_GAP;
                lastRank = r.track.rank();
            }
            r.y = y;
            y += r.height();
        }
        int height = y + 40;
        BufferedImage img = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, height);
            Scale x = new Scale(from, to);
            axis(g, x, height, title);
            lastRank = Integer.MIN_VALUE;
            for (Row r : rows.values()) {
                if (r.track.rank() != lastRank) {
                    lastRank = r.track.rank();
                    g.setColor(new Color(0x333333));
                    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
                    g.drawString("rank " + lastRank, 10, r.y - 8);
                    g.setColor(new Color(0xdddddd));
                    g.drawLine(0, r.y - RANK_GAP + 4, WIDTH, r.y - RANK_GAP + 4);
                }
                row(g, x, r);
            }
            Map<Timeline.Item, Row> rowOf = new LinkedHashMap<>();
            for (Row r : rows.values()) {
                r.spans.forEach(i -> rowOf.put(i, r));
                r.instants.forEach(i -> rowOf.put(i, r));
            }
            for (Timeline.Flow f : timeline.flows()) {
                Row a = rowOf.get(f.from());
                Row b = rowOf.get(f.to());
                if (a != null && b != null) {
                    arrow(g, x, f, a, b);
                }
            }
            legend(g, height);
        } finally {
            g.dispose();
        }
        try {
            if (!ImageIO.write(img, "png", file.toFile())) {
                throw new IOException("no PNG writer in this JDK");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** Gives every span of a row its nesting level: a span inside another is drawn one level below. */
    private static void nest(Row r) {
        Deque<Timeline.Item> open = new ArrayDeque<>();
        for (Timeline.Item i : r.spans) {
            while (!open.isEmpty() && open.peek().event().endNanos() <= i.event().startNanos()) {
                open.pop();
            }
            int lvl = open.size();
            r.level.put(i, lvl);
            r.levels = Math.max(r.levels, lvl + 1);
            open.push(i);
        }
    }

    /** Nanoseconds since the epoch to pixels. */
    private record Scale(long from, long to) {
        double x(long nanos) {
            return LEFT + (double) (nanos - from) * (WIDTH - LEFT - RIGHT) / (to - from);
        }

        double clip(double px) {
            return Math.max(LEFT, Math.min(WIDTH - RIGHT, px));
        }
    }

    private static void axis(Graphics2D g, Scale x, int height, String title) {
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        g.drawString(title, 10, 26);
        double spanUs = (x.to() - x.from()) / 1000.0;
        double step = niceStep(spanUs / 12);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        for (double t = 0; t <= spanUs + 1e-9; t += step) {
            double px = x.x(x.from() + (long) (t * 1000));
            g.setColor(new Color(0xeeeeee));
            g.drawLine((int) px, TOP - 10, (int) px, height - 40);
            g.setColor(new Color(0x555555));
            g.drawString(String.format(Locale.ROOT, step < 1 ? "%.1f us" : "%.0f us", t), (int) px + 2, TOP - 14);
        }
    }

    private static double niceStep(double raw) {
        double p = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double m : new double[]{1, 2, 5, 10}) {
            if (m * p >= raw) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static void row(Graphics2D g, Scale x, Row r) {
        g.setColor(new Color(0xf7f7f7));
        g.fillRect(LEFT, r.y, WIDTH - LEFT - RIGHT, r.height() - 4);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.drawString(shorten(g.getFontMetrics(), r.track.name(), LEFT - 20), 20, r.y + r.height() / 2 + 4);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        FontMetrics fm = g.getFontMetrics();
        for (Timeline.Item i : r.spans) {
            double x0 = x.clip(x.x(i.event().startNanos()));
            double x1 = x.clip(x.x(i.event().endNanos()));
            int top = r.y + INSTANT_BAND + r.level.get(i) * LEVEL;
            int w = (int) Math.max(1, Math.round(x1 - x0));
            Color c = COLORS.getOrDefault(i.category(), COLORS.get("other"));
            g.setColor(r.level.get(i) == 0 ? c : c.brighter());
            g.fillRect((int) x0, top, w, LEVEL - 2);
            if (w > 20) {
                g.setColor(Color.WHITE);
                g.drawString(shorten(fm, i.name(), w - 4), (int) x0 + 2, top + LEVEL - 7);
            }
        }
        // Names on two lanes, each name where its lane is free; a name with no room is left out (the triangle stays).
        double[] laneEnd = {Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY};
        for (Timeline.Item i : r.instants) {
            double px = x.x(i.event().startNanos());
            Color c = COLORS.getOrDefault(i.category(), COLORS.get("other"));
            g.setColor(c);
            Path2D tri = new Path2D.Double();
            tri.moveTo(px - 5, r.y + INSTANT_BAND - 12);
            tri.lineTo(px + 5, r.y + INSTANT_BAND - 12);
            tri.lineTo(px, r.y + INSTANT_BAND - 2);
            tri.closePath();
            g.fill(tri);
            int w = fm.stringWidth(i.name());
            for (int lane = 0; lane < 2; lane++) {
                if (px > laneEnd[lane]) {
                    g.setColor(c.darker());
                    g.drawString(i.name(), (int) px - 4, r.y + (lane == 0 ? 6 : 16));
                    laneEnd[lane] = px + w;
                    break;
                }
            }
        }
    }

    private static void arrow(Graphics2D g, Scale x, Timeline.Flow f, Row a, Row b) {
        double x0 = x.clip(x.x(f.from().event().startNanos()));
        double x1 = x.clip(x.x(f.to().event().startNanos()));
        double y0 = anchorY(f.from(), a);
        double y1 = anchorY(f.to(), b);
        g.setColor(f.kind().equals("doorbell") ? DOORBELL_FLOW : MESSAGE_FLOW);
        g.setStroke(new BasicStroke(1.6f));
        Path2D curve = new Path2D.Double();
        curve.moveTo(x0, y0);
        curve.curveTo(x0 + 30, y0, x1 - 30, y1, x1, y1);
        g.draw(curve);
        g.fill(arrowHead(x1, y1, 0));
        g.setStroke(new BasicStroke(1f));
    }

    private static double anchorY(Timeline.Item i, Row r) {
        if (i.shape() == Timeline.Shape.INSTANT) {
            return r.y + INSTANT_BAND - 7;
        }
        return r.y + INSTANT_BAND + r.level.get(i) * LEVEL + LEVEL / 2.0;
    }

    private static Path2D arrowHead(double x, double y, double angle) {
        Path2D p = new Path2D.Double();
        p.moveTo(x, y);
        p.lineTo(x - 9 * Math.cos(angle - 0.4), y - 9 * Math.sin(angle - 0.4));
        p.lineTo(x - 9 * Math.cos(angle + 0.4), y - 9 * Math.sin(angle + 0.4));
        p.closePath();
        return p;
    }

    private static void legend(Graphics2D g, int height) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        int lx = 10;
        int ly = height - 15;
        String[][] entries = {{"stream", "stream: batches, waits, tasks"}, {"nic", "NIC: drains, work requests, CQEs written"},
                {"doorbell", "doorbell rung"}, {"cpu", "CPU: CQE reaped"}, {"libmp", "libmp request state"},
                {"ki", "KI block"}};
        for (String[] e : entries) {
            g.setColor(COLORS.get(e[0]));
            g.fillRect(lx, ly - 10, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(e[1], lx + 16, ly);
            lx += 30 + g.getFontMetrics().stringWidth(e[1]);
        }
        g.setColor(DOORBELL_FLOW);
        g.drawLine(lx, ly - 4, lx + 20, ly - 4);
        g.setColor(Color.BLACK);
        g.drawString("doorbell to its work", lx + 24, ly);
        lx += 40 + g.getFontMetrics().stringWidth("doorbell to its work");
        g.setColor(MESSAGE_FLOW);
        g.drawLine(lx, ly - 4, lx + 20, ly - 4);
        g.setColor(Color.BLACK);
        g.drawString("send to the receiver's completion", lx + 24, ly);
    }

    private static String shorten(FontMetrics fm, String s, int width) {
        if (fm.stringWidth(s) <= width) {
            return s;
        }
        for (int n = s.length() - 1; n > 0; n--) {
            String t = s.substring(0, n) + "…";
            if (fm.stringWidth(t) <= width) {
                return t;
            }
        }
        return "";
    }
}
