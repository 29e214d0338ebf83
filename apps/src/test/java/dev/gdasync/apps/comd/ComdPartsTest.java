package dev.gdasync.apps.comd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The pieces around the simulation: C's number formats, the link-cell numbering, the CSV, the plot, the MPJ result line. */
class ComdPartsTest {
    @TempDir
    Path dir;

    @Test
    void numbersPrintAsCsPrintfPrintsThem() {
        assertEquals("   -1.166063303458", Text.fixed(-1.1660633034575, 18, 12)); // exact binary value rounds down
        assertEquals("      0.00", Text.fixed(0.0, 10, 2));
        assertEquals("-0.000000", Text.fixed(-1e-9, 0, 6));
        assertEquals("  600.0000", Text.fixed(600.0, 10, 4));
        assertEquals("63.55", Text.g(63.55));
        assertEquals("5.7875", Text.g(5.7875));
        assertEquals("-1", Text.g(-1.0));
        assertEquals("0.167", Text.g(0.167));
        assertEquals("1e-05", Text.g(1e-5));
        assertEquals("1.23457e+06", Text.g(1234567.0));
    }

    @Test
    void boxNumbersAndTuplesAreInverse() {
        Domain d = new Domain(new int[]{1, 1, 1}, 0, new double[]{40, 30, 20});
        LinkCells c = new LinkCells(d, 5);
        assertEquals(8 * 6 * 4, c.nLocalBoxes);
        int[] t = new int[3];
        boolean[] seen = new boolean[c.nTotalBoxes];
        for (int ix = -1; ix <= 8; ix++) {
            for (int iy = -1; iy <= 6; iy++) {
                for (int iz = -1; iz <= 4; iz++) {
                    int b = c.boxFromTuple(ix, iy, iz);
                    c.tuple(b, t);
                    assertEquals(List.of(ix, iy, iz), List.of(t[0], t[1], t[2]), "box " + b);
                    seen[b] = true;
                }
            }
        }
        for (int b = 0; b < seen.length; b++) {
            assertEquals(true, seen[b], "box " + b + " has a tuple");
        }
        assertEquals(c.boxFromTuple(8, 0, 0), c.boxFromCoord(40.0, 0.1, 0.1));
        assertEquals(c.boxFromTuple(-1, 5, 3), c.boxFromCoord(-0.1, 29.9, 19.9));
    }

    @Test
    void csvRowsReadBackAndDrawAPlot() {
        Path csv = dir.resolve("c.csv");
        ComdOptions o = ComdRanks.options("-x 10 -y 10 -z 10 -i 2 --mode mpj,host");
        List<RunResult> runs = List.of(
                new RunResult("mpj", List.of(), -1, -1, 4000, 4000, 90, 20.0, 10.0, 0.1, 9.0),
                new RunResult("host", List.of(), -1, -1, 4000, 4000, 90, 10.0, 7.0, 0.1, 2.5));
        ComdCsv.append(o, runs, csv);
        ComdCsv.append(o, runs, csv);
        List<ComdCsv.Row> rows = ComdCsv.read(csv);
        assertEquals(4, rows.size());
        assertEquals("lj 2r 10x10x10", rows.get(1).caseLabel());
        assertEquals(50.0, rows.get(1).gainPct(), 1e-9);
        assertEquals(Double.NaN, Double.NaN);
        Path png = dir.resolve("c.png");
        StepPlot.write(rows, png);
        BufferedImage img = assertDoesNotThrowRead(png);
        assertEquals(StepPlot.WIDTH, img.getWidth());
        assertEquals(StepPlot.HEIGHT, img.getHeight());
    }

    private static BufferedImage assertDoesNotThrowRead(Path png) {
        try {
            BufferedImage img = ImageIO.read(png.toFile());
            assertNotNull(img);
            return img;
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void theMpjResultLineCarriesEveryBit() {
        RunResult r = new RunResult("mpj", List.of(new RunResult.EnergyLine(0, 0.0, -1.1660633034575, -1.2436, 0.0775, 600.0, 32000),
                new RunResult.EnergyLine(10, 10.0, Math.nextUp(-1.2), -1.3, 0.1, 519.1, 32000)), -1.1, -1.2, 32000, 32000, 90,
                1.5, 1.0, 0.25, 0.125);
        assertEquals(r, RunResult.decode(r.encode()));
    }

    @Test
    void aMalformedPotentialSaysWhere() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Eam.parse("Cu\n29\n", "here.eam"));
        assertEquals("the EAM potential file here.eam ends before its three header lines", e.getMessage());
    }
}
