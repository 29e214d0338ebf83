package dev.gdasync.apps.spmv;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CSR parts, and the app end to end under the launcher on 4 rank processes against the serial product. */
@Timeout(400)
class SpmvTest {
    @TempDir
    Path dir;

    @Test
    void matrixMarketSymmetricWithDuplicatesAndPattern() throws Exception {
        Path f = dir.resolve("a.mtx");
        Files.writeString(f, """
                %%MatrixMarket matrix coordinate real symmetric
                % a comment
                3 3 4
                1 1 2.0
                2 1 -1
                3 3 5
                3 3 1
                """);
        CsrMatrix all = CsrMatrix.readMatrixMarket(f, -1, 0);
        assertEquals(3, all.n);
        assertArrayEquals(new int[] {0, 2, 3, 4}, all.rowStart);
        assertArrayEquals(new int[] {0, 1, 0, 2}, all.col);
        assertArrayEquals(new double[] {2, -1, -1, 6}, all.val, "the mirror of (2,1) and the sum of the duplicates");
        CsrMatrix last = CsrMatrix.readMatrixMarket(f, 2, 1);
        double[] y = new double[1];
        last.multiply(new double[] {1, 1, 2}, 0, y);
        assertEquals(12, y[0]);
        Path p = dir.resolve("p.mtx");
        Files.writeString(p, "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n");
        assertArrayEquals(new double[] {1}, CsrMatrix.readMatrixMarket(p, -1, 0).val);
        Path rect = dir.resolve("r.mtx");
        Files.writeString(rect, "%%MatrixMarket matrix coordinate real general\n2 3 0\n");
        assertTrue(assertThrowsMessage(() -> CsrMatrix.readMatrixMarket(rect, -1, 0)).contains("needs a square one"));
    }

    @Test
    void laplacianRowsSumToZeroInsideAndSpanTheirNeighbours() {
        CsrMatrix m = CsrMatrix.laplace2d(4, 5, 2);
        assertEquals(10, m.nonzeros());
        assertArrayEquals(new int[] {1, 10}, m.columnSpan());
        double[] x = new double[16];
        java.util.Arrays.fill(x, 1);
        double[] y = new double[2];
        m.multiply(java.util.Arrays.copyOfRange(x, 1, 11), 1, y);
        assertArrayEquals(new double[] {0, 0}, y);
        assertEquals(8, m.maxRowSum());
    }

    @Test
    void fourRanksMatchTheSerialProductWithPutAccAndAFile() throws Exception {
        Path f = dir.resolve("m.mtx");
        StringBuilder mm = new StringBuilder("%%MatrixMarket matrix coordinate real general\n50 50 150\n");
        for (int i = 0; i < 50; i++) {
            mm.append(i + 1).append(' ').append(i + 1).append(" 3.5\n");
            mm.append(i + 1).append(' ').append((i * 7) % 50 + 1).append(" -1.25\n");
            mm.append((i * 13) % 50 + 1).append(' ').append(i + 1).append(" 0.5\n");
        }
        Files.writeString(f, mm);
        String[][] runs = {
                {"--size", "24", "--iterations", "6"},
                {"--generate", "random", "--size", "997", "--per-row", "6", "--write", "acc", "--iterations", "5"},
                {"--matrix", f.toString(), "--iterations", "4"},
        };
        for (String[] args : runs) {
            String out = mprun(4, args);
            assertTrue(out.contains("[0] spmv: ") && out.contains("ranks=4") && out.contains(": matches the serial product"), out);
        }
    }

    /** @return the output of spmv on {@code ranks} ranks, stderr merged in, which must exit 0 within 200 s */
    private static String mprun(int ranks, String... args) {
        List<String> a = new ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1",
                "-np", String.valueOf(ranks), "spmv"));
        a.addAll(List.of(args));
        ChildProcess.Finished run = Launcher.mprun(a).mergeStderr().run(Duration.ofSeconds(200));
        assertEquals(0, run.status(), run.out());
        return run.out();
    }

    private static String assertThrowsMessage(org.junit.jupiter.api.function.Executable e) {
        return org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, e).getMessage();
    }
}
