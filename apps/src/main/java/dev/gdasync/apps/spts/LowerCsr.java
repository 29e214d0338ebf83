package dev.gdasync.apps.spts;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A lower-triangular sparse matrix in compressed sparse row form: in each row the off-diagonal entries (columns below
 * the row, ascending), then the diagonal, kept apart. Generated ({@link #random}) or read from the lower triangle of a
 * Matrix Market file ({@link #readMatrixMarket}).
 */
final class LowerCsr {
    final int n;
    final int[] rowStart;
    final int[] col;
    final double[] val;
    final double[] diag;

    LowerCsr(int n, int[] rowStart, int[] col, double[] val, double[] diag) {
        this.n = n;
        this.rowStart = rowStart;
        this.col = col;
        this.val = val;
        this.diag = diag;
    }

    /** @return the off-diagonal entries */
    int offDiagonal() {
        return rowStart[n];
    }

    /**
     * A random well-conditioned lower-triangular matrix: row i has up to {@code perRow} distinct columns drawn from
     * the {@code window} rows above it (so dependencies chain across PEs), values in [-1, 1), and a diagonal of
     * 2 + the row's absolute sum.
     */
    static LowerCsr random(int n, int perRow, int window, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] rowStart = new int[n + 1];
        List<int[]> cols = new ArrayList<>(n);
        List<double[]> vals = new ArrayList<>(n);
        double[] diag = new double[n];
        for (int r = 0; r < n; r++) {
            int i = r;
            int k = Math.min(i, perRow);
            // k <= the number of candidate rows (window >= perRow), so the distinct draws end.
            int[] c = rnd.ints(0, Math.max(1, Math.min(i, window))).distinct().limit(k).map(d -> i - 1 - d).sorted()
                    .toArray();
            double[] v = new double[c.length];
            double sum = 0;
            for (int e = 0; e < c.length; e++) {
                v[e] = rnd.nextDouble(-1, 1);
                sum += Math.abs(v[e]);
            }
            diag[i] = 2 + sum;
            cols.add(c);
            vals.add(v);
            rowStart[i + 1] = rowStart[i] + c.length;
        }
        return pack(n, rowStart, cols, vals, diag);
    }

    /**
     * Reads the lower triangle (diagonal included) of a square Matrix Market coordinate matrix (real, integer or
     * pattern; general or symmetric); entries above the diagonal of a general file are left out, duplicates summed.
     *
     * @throws IllegalArgumentException if the file is not such a matrix, or a row has no (or a zero) diagonal
     */
    static LowerCsr readMatrixMarket(Path file) throws IOException {
        try (BufferedReader r = Files.newBufferedReader(file)) {
            String header = r.readLine();
            if (header == null || !header.toLowerCase(Locale.ROOT).startsWith("%%matrixmarket matrix coordinate")) {
                throw new IllegalArgumentException(file + " is not a Matrix Market coordinate matrix");
            }
            boolean pattern = header.toLowerCase(Locale.ROOT).contains("pattern");
            String line;
            do {
                line = r.readLine();
            } while (line != null && (line.startsWith("%") || line.isBlank()));
            if (line == null) {
                throw new IllegalArgumentException(file + " has no size line");
            }
            String[] size = line.trim().split("\\s+");
            int rows = Integer.parseInt(size[0]);
            int cols = Integer.parseInt(size[1]);
            if (rows != cols) {
                throw new IllegalArgumentException(file + " is " + rows + " x " + cols + ": a triangular solve needs a"
                        + " square matrix");
            }
            List<List<double[]>> byRow = new ArrayList<>(rows);
            for (int i = 0; i < rows; i++) {
                byRow.add(new ArrayList<>());
            }
            double[] diag = new double[rows];
            while ((line = r.readLine()) != null) {
                if (line.isBlank() || line.startsWith("%")) {
                    continue;
                }
                String[] f = line.trim().split("\\s+");
                int i = Integer.parseInt(f[0]) - 1;
                int j = Integer.parseInt(f[1]) - 1;
                double v = pattern ? 1 : Double.parseDouble(f[2]);
                if (i == j) {
                    diag[i] += v;
                } else if (j < i) {
                    byRow.get(i).add(new double[] {j, v});
                }
            }
            for (int i = 0; i < rows; i++) {
                if (diag[i] == 0) {
                    throw new IllegalArgumentException(file + ": row " + (i + 1) + " has no non-zero diagonal entry,"
                            + " so its lower triangle is singular");
                }
            }
            int[] rowStart = new int[rows + 1];
            List<int[]> colsOf = new ArrayList<>(rows);
            List<double[]> valsOf = new ArrayList<>(rows);
            for (int i = 0; i < rows; i++) {
                List<double[]> e = byRow.get(i);
                e.sort((a, b) -> Double.compare(a[0], b[0]));
                List<Integer> c = new ArrayList<>();
                List<Double> v = new ArrayList<>();
                for (double[] x : e) {
                    if (!c.isEmpty() && c.get(c.size() - 1) == (int) x[0]) {
                        v.set(v.size() - 1, v.get(v.size() - 1) + x[1]);
                    } else {
                        c.add((int) x[0]);
                        v.add(x[1]);
                    }
                }
                colsOf.add(c.stream().mapToInt(Integer::intValue).toArray());
                valsOf.add(v.stream().mapToDouble(Double::doubleValue).toArray());
                rowStart[i + 1] = rowStart[i] + c.size();
            }
            return pack(rows, rowStart, colsOf, valsOf, diag);
        }
    }

    private static LowerCsr pack(int n, int[] rowStart, List<int[]> cols, List<double[]> vals, double[] diag) {
        int[] col = new int[rowStart[n]];
        double[] val = new double[rowStart[n]];
        for (int i = 0; i < n; i++) {
            System.arraycopy(cols.get(i), 0, col, rowStart[i], cols.get(i).length);
            System.arraycopy(vals.get(i), 0, val, rowStart[i], vals.get(i).length);
        }
        return new LowerCsr(n, rowStart, col, val, diag);
    }

    /** @return x with L·x = b, solved row by row (the serial reference) */
    double[] solveSerial(double[] b) {
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int e = rowStart[i]; e < rowStart[i + 1]; e++) {
                s += val[e] * x[col[e]];
            }
            x[i] = (b[i] - s) / diag[i];
        }
        return x;
    }

    /** @return ‖L·x − b‖₂ / ‖b‖₂ */
    double relativeResidual(double[] x, double[] b) {
        double r2 = 0;
        double b2 = 0;
        for (int i = 0; i < n; i++) {
            double s = diag[i] * x[i];
            for (int e = rowStart[i]; e < rowStart[i + 1]; e++) {
                s += val[e] * x[col[e]];
            }
            r2 += (s - b[i]) * (s - b[i]);
            b2 += b[i] * b[i];
        }
        return Math.sqrt(r2) / Math.sqrt(b2);
    }

    @Override
    public String toString() {
        return "LowerCsr{n=" + n + ", off-diagonal " + offDiagonal() + ", first row "
                + Arrays.toString(Arrays.copyOfRange(col, rowStart[Math.min(1, n)], rowStart[Math.min(2, n)])) + "}";
    }
}
