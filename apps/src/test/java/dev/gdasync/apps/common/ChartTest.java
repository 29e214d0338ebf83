package dev.gdasync.apps.common;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The chart helper: every kind is written as a PNG that ImageIO reads back, of the size asked, with its colours. */
class ChartTest {
    private static final Color BLUE = new Color(0x1f77b4);
    private static final Color RED = new Color(0xd62728);

    @TempDir
    Path dir;

    @Test
    void linesOnLogAxesAreWrittenAsAPngOfTheSizeAsked() throws Exception {
        LineChart lines = new LineChart(Chart.Axis.bytes("bytes"), Chart.Axis.log("\u00b5s"), Map.of("host", BLUE, "sa", RED));
        for (int b = 8; b <= 1 << 20; b *= 8) {
            lines.add("host", b, 0.3 + b / 1e4).add("sa", b, 0.6 + b / 1e4);
        }
        Path png = dir.resolve("lines.png");
        Chart.write(lines.chart("lines"), 640, 400, png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "ImageIO reads it back");
        assertEquals(640, img.getWidth());
        assertEquals(400, img.getHeight());
        assertTrue(count(img, BLUE) > 50, "the host line is drawn");
        assertTrue(count(img, RED) > 50, "the sa line is drawn");
    }

    @Test
    void barsStackedInGroupsAndHorizontalBarsAreDrawn() throws Exception {
        BarChart stacked = new BarChart("case", Chart.Axis.linear("%"), Map.of());
        for (String mode : List.of("host", "sa")) {
            stacked.stack(mode + " a", mode, BLUE).add(mode + " a", "case 1", 40);
            stacked.stack(mode + " b", mode, RED).add(mode + " b", "case 1", 30);
        }
        stacked.labels((series, category, v) -> series.endsWith(" b") ? series.substring(0, series.indexOf(' ')) : null)
                .legend(Map.of("a", BLUE, "b", RED));
        Path png = dir.resolve("stacked.png");
        Chart.write(stacked.chart("stacked"), 500, 400, png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(500, img.getWidth());
        assertEquals(400, img.getHeight());
        assertTrue(count(img, BLUE) > 1000 && count(img, RED) > 1000, "both parts of the bars are drawn");

        BufferedImage bars = Chart.render(new BarChart("", Chart.Axis.log("\u00b5s"), Map.of("ompi", RED))
                .horizontal().colourEachCategory().add("median", "ompi", 0.5).add("median", "mpj", 40).chart("bars"), 800, 200);
        assertEquals(800, bars.getWidth());
        assertTrue(count(bars, RED) > 1000, "the bar of a fixed colour is drawn");
    }

    @Test
    void panelsShareOneImageAndABlankPanelStaysBlank() {
        LineChart lines = new LineChart(Chart.Axis.bytes("bytes"), Chart.Axis.linear("%").range(0, 100), Map.of("host", BLUE));
        lines.add("host", 64, 50).add("host", 4096, 20);
        BufferedImage img = Chart.panels("title", 2, 300, 200, 30, Arrays.asList(Chart.panel("one", lines.plot()), null));
        assertEquals(600, img.getWidth());
        assertEquals(230, img.getHeight());
        assertTrue(count(img.getSubimage(0, 30, 300, 200), BLUE) > 20, "the first panel is drawn");
        assertEquals(0, count(img.getSubimage(300, 30, 300, 200), BLUE), "the second is left blank");
        assertTrue(count(img.getSubimage(0, 0, 600, 30), Color.WHITE) < 600 * 30, "the title is written");
    }

    @Test
    void whatALogAxisCannotShowIsRefused() {
        LineChart lines = new LineChart(Chart.Axis.bytes("bytes"), Chart.Axis.log("y"), Map.of());
        assertThrows(IllegalArgumentException.class, () -> lines.add("host", 8, 0));
        assertThrows(IllegalArgumentException.class, lines::plot, "no points, no plot");
        assertThrows(IllegalArgumentException.class, () -> new BarChart("c", Chart.Axis.linear("v"), Map.of()).chart("t"));
    }

    @Test
    void tickLabelsAndColours() {
        assertEquals("8 B", Chart.bytes(8));
        assertEquals("4 KiB", Chart.bytes(4096));
        assertEquals("1 MiB", Chart.bytes(1 << 20));
        assertEquals("0.01", Chart.decimal(0.01));
        assertEquals("100", Chart.decimal(100));
        Map<String, Color> p = Chart.palette(List.of("x", "host", "y"), Map.of("host", BLUE));
        assertEquals(List.of("x", "host", "y"), List.copyOf(p.keySet()));
        assertEquals(BLUE, p.get("host"));
        assertTrue(!p.get("x").equals(p.get("y")), "others take colours in turn");

        // A fixed colour that is also in the palette of others (MPJ's niodev brown, in the ping-pong's plot) is not
        // given to a second line.
        Color brown = new Color(0x8c564b);
        Map<String, Color> q = Chart.palette(List.of("a", "fixed", "b", "c"), Map.of("fixed", brown));
        assertEquals(4, new HashSet<>(q.values()).size(), "four lines, four colours: " + q);
        assertEquals(brown, q.get("fixed"));
    }

    private static int count(BufferedImage img, Color c) {
        int n = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                if ((img.getRGB(x, y) & 0xffffff) == (c.getRGB() & 0xffffff)) {
                    n++;
                }
            }
        }
        return n;
    }
}
