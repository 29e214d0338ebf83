package dev.gdasync.apps.hpgmg;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The benchmark's CSV read back and drawn: a panel per rank count, a line per mode; bad input refused. */
class HpgmgPlotTest {
    @TempDir
    Path dir;

    @Test
    void csvRowsAreDrawnAPanelPerRankCount() throws Exception {
        Path csv = dir.resolve("h.csv");
        Files.write(csv, List.of(Summary.CSV_HEADER,
                "host,2,4,8,0.03125,32768,0.020000000,1.6e+06,8.4e-04,9.6e-04",
                "sa,2,4,8,0.03125,32768,0.030000000,1.1e+06,8.4e-04,9.6e-04",
                "host,2,5,8,0.015625,262144,0.150000000,1.7e+06,8.4e-04,9.6e-04",
                "sa,2,5,8,0.015625,262144,0.140000000,1.8e+06,8.4e-04,9.6e-04",
                "host,4,4,8,0.03125,32768,0.025000000,1.3e+06,8.4e-04,9.6e-04",
                "host,4,5,8,0.015625,262144,0.100000000,2.6e+06,8.4e-04,9.6e-04"));
        List<SolvePlot.Row> rows = SolvePlot.read(csv);
        assertEquals(6, rows.size());
        assertEquals(new SolvePlot.Row("sa", 2, 5, 0.14), rows.get(3));
        Path png = dir.resolve("h.png");
        SolvePlot.write(rows, png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "a readable PNG");
        assertTrue(img.getWidth() > 2 * SolvePlot.PANEL_WIDTH - 40 && img.getWidth() < 2 * SolvePlot.PANEL_WIDTH + 120,
                "two panels wide: " + img.getWidth());
        assertEquals(SolvePlot.HEIGHT, img.getHeight());
        // one panel for one rank count is narrower
        assertTrue(SolvePlot.render(rows.subList(0, 4)).getWidth() < img.getWidth());
        // something other than white and grid is drawn: the lines' colours
        int coloured = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int rgb = img.getRGB(x, y) & 0xffffff;
                int r = rgb >> 16, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    coloured++;
                }
            }
        }
        assertNotEquals(0, coloured, "coloured lines are drawn");
    }

    @Test
    void badInputIsRefusedWithTheReason() throws Exception {
        Path notOurs = dir.resolve("x.csv");
        Files.write(notOurs, List.of("a,b,c"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SolvePlot.read(notOurs));
        assertTrue(e.getMessage().contains("is not an hpgmg CSV"), e.getMessage());
        Path broken = dir.resolve("y.csv");
        Files.write(broken, List.of(Summary.CSV_HEADER, "host,two,4,8,0.03125,32768,0.02,1.6e+06,8.4e-04,9.6e-04"));
        e = assertThrows(IllegalArgumentException.class, () -> SolvePlot.read(broken));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SolvePlot.render(List.of()));
        e = assertThrows(IllegalArgumentException.class, () -> SolvePlot.render(List.of(new SolvePlot.Row("host", 2, 4, 0))));
        assertTrue(e.getMessage().contains("log axis"), e.getMessage());
    }

    @Test
    void plotWithoutCsvIsRefused() {
        HpgmgCommand c = new HpgmgCommand();
        c.log2Box = 4;
        c.boxesPerRank = 8;
        c.plot = dir.resolve("p.png");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, c::check);
        assertEquals("--plot draws the rows of the --csv file: give --csv FILE too", e.getMessage());
        c.csv = dir.resolve("no-such-folder").resolve("h.csv");
        e = assertThrows(IllegalArgumentException.class, c::check);
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    }
}
