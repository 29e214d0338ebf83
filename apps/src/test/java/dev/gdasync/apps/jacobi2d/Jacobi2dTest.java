package dev.gdasync.apps.jacobi2d;

import dev.gdasync.apps.shmemrun.AppProcesses;
import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The split and the reference, and the app end to end under the launcher on 3 PE processes in every mode. */
@Timeout(400)
class Jacobi2dTest {
    @TempDir
    Path dir;

    @Test
    void rowsSplitEvenlyAndCoverTheGrid() {
        Grid g = new Grid(8, 10, 4);
        int[] chunks = {g.chunk(0), g.chunk(1), g.chunk(2), g.chunk(3)};
        assertEquals(List.of(3, 3, 2, 2), List.of(chunks[0], chunks[1], chunks[2], chunks[3]));
        assertEquals(0, g.first(0));
        assertEquals(6, g.first(2));
        assertEquals(10, g.first(3) + g.chunk(3));
        assertEquals(5, g.rowsHeld());
        assertThrows(IllegalArgumentException.class, () -> new Grid(8, 3, 4));
        assertThrows(IllegalArgumentException.class, () -> new Grid(2, 8, 1));
    }

    /** The reference relaxes: the boundary columns stay, the inside moves towards them, mirrored in y. */
    @Test
    void theReferenceKeepsItsBoundaryAndIsAntisymmetric() {
        Grid g = new Grid(16, 16, 1);
        double[] r = g.reference(50);
        for (int iy = 0; iy < 16; iy++) {
            assertEquals(g.boundary(iy), r[iy * 16], "left column of row " + iy);
            assertEquals(g.boundary(iy), r[iy * 16 + 15], "right column of row " + iy);
        }
        assertNotEquals(0.0, r[4 * 16 + 1], "the inside moved");
        // sin(2π·iy/ny) is odd about row 0 (periodic): row iy and row ny - iy are opposite.
        assertEquals(-r[3 * 16 + 5], r[13 * 16 + 5], 1e-12);
    }

    @Test
    void threePesInEveryModeEqualTheOnePeGridAndWriteCsvAndPlot() throws Exception {
        Path csv = dir.resolve("j.csv");
        Path png = dir.resolve("j.png");
        String out = mprun(3, "--nx", "40", "--ny", "31", "--iterations", "60", "--repeat", "1", "--csv", csv.toString(),
                "--plot", png.toString());
        for (String mode : List.of("host", "sa", "ki")) {
            assertTrue(out.contains("[0] check (" + mode + "): the 3-PE grid equals the 1-PE grid element by element (1240"
                    + " elements)"), out);
        }
        assertTrue(out.contains("[0] 31x40: 3 PEs (sa): "), out);
        List<String> rows = Files.readAllLines(csv);
        assertEquals(JacobiPlot.HEADER, rows.get(0));
        assertEquals(4, rows.size(), rows.toString());
        assertTrue(rows.get(1).startsWith("host,3,40,31,60,") && rows.get(1).endsWith(",true"), rows.toString());
        assertTrue(rows.get(2).startsWith("sa,3,40,31,60,") && rows.get(2).endsWith(",true"), rows.toString());
        assertTrue(rows.get(3).startsWith("ki,3,40,31,60,") && rows.get(3).endsWith(",true"), rows.toString());
        assertTrue(Files.size(png) > 1000, "a PNG was drawn");
    }

    @Test
    void onePeRunsAndBadOptionsAreRefused() throws Exception {
        String out = mprun(1, "--nx", "12", "--ny", "9", "--iterations", "7", "--repeat", "1", "--mode", "sa");
        assertTrue(out.contains("check (sa): the 1-PE grid equals the 1-PE grid element by element (108 elements)"), out);
        ChildProcess.Finished bad = AppProcesses.launcher("jacobi2d", 1, "--mode", "mpj").run(Duration.ofSeconds(200));
        assertNotEquals(0, bad.status(), bad.out());
        assertTrue(bad.out().contains("--mode takes host, sa and ki, got 'mpj'"), bad.out());
    }

    private static String mprun(int pes, String... args) throws Exception {
        return AppProcesses.run("jacobi2d", pes, args);
    }
}
