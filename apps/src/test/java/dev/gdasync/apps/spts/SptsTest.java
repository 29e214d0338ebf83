package dev.gdasync.apps.spts;

import dev.gdasync.apps.shmemrun.AppProcesses;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The matrix parts, the split, and the solve end to end on 1, 2 and 4 PE processes (host, SA and KI models; the KI model's
 * 4-PE case needs more than one launch toward a PE: 1500 rows with a window of 200 send more than 128 values from one
 * PE to the next) and on a Matrix Market file.
 */
@Timeout(500)
class SptsTest {
    @TempDir
    Path dir;

    @Test
    void ownersFollowTheBlocks() {
        assertEquals(0, Spts.first(10, 4, 0));
        assertEquals(6, Spts.first(10, 4, 2));
        assertEquals(10, Spts.first(10, 4, 4));
        int[] owners = new int[10];
        for (int i = 0; i < 10; i++) {
            owners[i] = Spts.owner(10, 4, i);
        }
        assertArrayEquals(new int[] {0, 0, 0, 1, 1, 1, 2, 2, 3, 3}, owners);
    }

    @Test
    void generatedAndReadMatricesAreLowerTriangularAndSolveSerially() throws Exception {
        LowerCsr g = LowerCsr.random(500, 5, 40, 3);
        for (int i = 0; i < g.n; i++) {
            assertTrue(g.rowStart[i + 1] - g.rowStart[i] <= 5);
            for (int e = g.rowStart[i]; e < g.rowStart[i + 1]; e++) {
                assertTrue(g.col[e] < i && g.col[e] >= i - 40, "row " + i + " column " + g.col[e]);
            }
        }
        double[] b = new double[g.n];
        java.util.Arrays.fill(b, 2);
        assertTrue(g.relativeResidual(g.solveSerial(b), b) < 1e-14);
        Path f = dir.resolve("l.mtx");
        Files.writeString(f, """
                %%MatrixMarket matrix coordinate real general
                3 3 6
                1 1 2
                2 1 1
                1 2 9
                2 2 4
                3 2 -1
                3 3 1
                """);
        LowerCsr m = LowerCsr.readMatrixMarket(f);
        assertArrayEquals(new double[] {2, 4, 1}, m.diag);
        assertArrayEquals(new int[] {0, 1}, m.col, "the entry above the diagonal is left out");
        double[] x = m.solveSerial(new double[] {2, 5, 0});
        assertArrayEquals(new double[] {1, 1, 1}, x);
        Path singular = dir.resolve("s.mtx");
        Files.writeString(singular, "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LowerCsr.readMatrixMarket(singular)).getMessage()
                .contains("row 2 has no non-zero diagonal"));
    }

    @Test
    void theResidualPassesOnOneTwoAndFourPesAndOnAFile() throws Exception {
        for (int pes : new int[] {1, 2, 4}) {
            String out = mprun(pes, "--n", "1500", "--window", "200", "--mode", "host,sa,ki");
            if (pes == 4) {
                assertTrue(out.lines().anyMatch(line -> line.matches("\\[0\\] spts: PE 0 mode ki .* in [2-9] KI launches")),
                        "PE 0 sends more values to PE 1 than one launch has slots for: " + out);
            }
            for (String mode : new String[] {"host", "sa", "ki"}) {
                assertTrue(out.contains("[0] spts: n=1500, off-diagonal ") && out.contains("PEs=" + pes + ", mode " + mode
                        + ": "), out);
                assertTrue(out.lines().anyMatch(line -> line.startsWith("[0] spts: mode " + mode + ": relative residual ")
                        && line.contains("(tolerance 1.0e-12): passed")), mode + ": " + out);
            }
        }
        Path f = dir.resolve("m.mtx");
        StringBuilder mm = new StringBuilder("%%MatrixMarket matrix coordinate real symmetric\n60 60 172\n");
        for (int i = 1; i <= 60; i++) {
            mm.append(i).append(' ').append(i).append(" 4\n");
            if (i > 1) {
                mm.append(i).append(' ').append(i - 1).append(" -1\n");
            }
            if (i > 7) {
                mm.append(i).append(' ').append(i - 7).append(" 0.5\n");
            }
        }
        Files.writeString(f, mm);
        String out = mprun(3, "--matrix", f.toString());
        assertTrue(out.contains("[0] spts: n=60, off-diagonal 112, PEs=3") && out.contains("passed"), out);
    }

    private static String mprun(int pes, String... args) throws Exception {
        return AppProcesses.run("spts", pes, args);
    }
}
