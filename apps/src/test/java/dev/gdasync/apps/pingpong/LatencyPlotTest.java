package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LatencyPlotTest {
    @TempDir
    Path dir;

    private static final List<Result> ROWS = List.of(
            new Result("host", 8, 10000, 0.27), new Result("host", 4096, 10000, 0.45), new Result("host", 1048576, 10000, 24),
            new Result("sa", 8, 10000, 0.6), new Result("sa", 4096, 10000, 0.8), new Result("sa", 1048576, 10000, 27),
            new Result("mpj", 8, 10000, 15), new Result("mpj", 4096, 10000, 20), new Result("mpj", 1048576, 10000, 400));

    @Test
    void writesAValidPngOfTheRightSize() throws Exception {
        Path png = dir.resolve("latency.png");
        LatencyPlot.write(ROWS, png);
        byte[] bytes = Files.readAllBytes(png);
        assertArrayEquals(new byte[]{(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, Arrays.copyOf(bytes, 8));
        assertTrue(bytes.length < 100_000, "a small PNG, got " + bytes.length + " bytes");
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "ImageIO reads it back");
        assertEquals(LatencyPlot.WIDTH, img.getWidth());
        assertEquals(LatencyPlot.HEIGHT, img.getHeight());
    }

    @Test
    void everyModeGetsItsColourOnTheImage() {
        BufferedImage img = LatencyPlot.render(ROWS, 800, 500);
        for (int rgb : new int[]{0x1f77b4, 0xd62728, 0x2ca02c}) {
            assertTrue(count(img, rgb) > 50, String.format("colour %06x drawn", rgb));
        }
    }

    @Test
    void oneSizeOrOneModeIsEnough() {
        BufferedImage img = LatencyPlot.render(List.of(new Result("host", 8, 10, 0.3)), 640, 400);
        assertEquals(640, img.getWidth());
        assertEquals(400, img.getHeight());
        assertTrue(count(img, 0x1f77b4) > 10);
    }

    @Test
    void refusesWhatALogAxisCannotShow() {
        assertThrows(IllegalArgumentException.class, () -> LatencyPlot.render(List.of(), 800, 500));
        assertThrows(IllegalArgumentException.class, () -> LatencyPlot.render(List.of(new Result("host", 8, 1, 0)), 800, 500));
    }

    @Test
    void labels() {
        assertEquals("8 B", LatencyPlot.bytes(8));
        assertEquals("4 KiB", LatencyPlot.bytes(4096));
        assertEquals("1 MiB", LatencyPlot.bytes(1 << 20));
        assertEquals("0.1", LatencyPlot.micros(0.1));
        assertEquals("0.01", LatencyPlot.micros(0.01));
        assertEquals("100", LatencyPlot.micros(100));
    }

    private static int count(BufferedImage img, int rgb) {
        int n = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                if ((img.getRGB(x, y) & 0xffffff) == rgb) {
                    n++;
                }
            }
        }
        return n;
    }
}
