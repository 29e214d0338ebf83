package dev.gdasync.apps.shmembench;

import dev.gdasync.apps.common.Chart;
import dev.gdasync.apps.common.LineChart;
import org.jfree.chart.JFreeChart;

import java.awt.Color;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The plot of {@code --plot}: a panel per operation with transfers (put, pingpong, get), µs per operation against
 * bytes, both axes logarithmic, a line per mode; the fetch-add's latencies in the title ({@link Chart}, headless, a
 * PNG).
 */
final class LatencyChart {
    static final String HEADER = "op,mode,bytes,us_per_op";
    private static final List<String> PANELS = List.of("put", "putnbi", "pingpong", "get");
    private static final List<String> MODES = List.of("host", "sa", "ki");
    private static final int PANEL_W = 400;
    private static final int HEIGHT = 380;
    private static final int TITLE = 30;
    private static final Map<String, Color> COLORS = Map.of("host", new Color(0x1f77b4), "sa", new Color(0xd62728), "ki",
            new Color(0x2ca02c));

    /** One result: an operation in a mode at a size, µs per operation. */
    record Row(String op, String mode, int bytes, double micros) {
    }

    private LatencyChart() {
    }

    static void write(List<Row> rows, Path file) {
        StringBuilder atomic = new StringBuilder();
        rows.stream().filter(r -> r.op().equals("atomic")).forEach(r -> atomic.append(
                String.format(Locale.ROOT, "; fetch-add (%s) %.2f \u00b5s", r.mode(), r.micros())));
        List<JFreeChart> panels = new ArrayList<>();
        for (String op : PANELS) {
            LineChart lines = new LineChart(Chart.Axis.bytes("bytes"), Chart.Axis.log("\u00b5s per op"), COLORS);
            for (String mode : MODES) {
                rows.stream().filter(r -> r.op().equals(op) && r.mode().equals(mode))
                        .forEach(r -> lines.add(mode, r.bytes(), r.micros()));
            }
            panels.add(lines.isEmpty() ? null
                    : Chart.panel(op + (op.equals("pingpong") ? " (half round trip)" : ""), lines.plot()));
        }
        Chart.write(Chart.panels("shmembench: PE 0 to PE 1, \u00b5s per operation (host: CPU; sa: a host stream; ki: a KI"
                + " block)" + atomic, PANELS.size(), PANEL_W, HEIGHT - TITLE, TITLE, panels), file);
    }
}
