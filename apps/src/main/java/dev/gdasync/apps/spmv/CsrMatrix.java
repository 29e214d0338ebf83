package dev.gdasync.apps.spmv;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Rows {@code first..first + rows - 1} of a square sparse matrix in compressed sparse row form, columns sorted within
 * each row. Generated ({@link #laplace2d}, {@link #random}) row by row, so each rank makes only its own rows, or read
 * from a Matrix Market file ({@link #readMatrixMarket}).
 */
final class CsrMatrix {
    final int n;
    final int first;
    final int rows;
    final int[] rowStart;
    final int[] col;
    final double[] val;

    CsrMatrix(int n, int first, int rows, int[] rowStart, int[] col, double[] val) {
        this.n = n;
        this.first = first;
        this.rows = rows;
        this.rowStart = rowStart;
        this.col = col;
        this.val = val;
    }

    long nonzeros() {
        return rowStart[rows];
    }

    /** y[i] = sum of row (first + i) times x, where x holds columns {@code x0..}. */
    void multiply(double[] x, int x0, double[] y) {
        for (int i = 0; i < rows; i++) {
            double s = 0;
            for (int k = rowStart[i]; k < rowStart[i + 1]; k++) {
                s += val[k] * x[col[k] - x0];
            }
            y[i] = s;
        }
    }

    /** @return the smallest and largest column of these rows, or {0, -1} if they hold no entry */
    int[] columnSpan() {
        if (nonzeros() == 0) {
            return new int[] {0, -1};
        }
        int lo = Integer.MAX_VALUE;
        int hi = -1;
        for (int i = 0; i < rows; i++) {
            if (rowStart[i + 1] > rowStart[i]) {
                lo = Math.min(lo, col[rowStart[i]]);
                hi = Math.max(hi, col[rowStart[i + 1] - 1]);
            }
        }
        return new int[] {lo, hi};
    }

    /** @return the largest absolute row sum of these rows (the infinity norm of the slice) */
    double maxRowSum() {
        double m = 0;
        for (int i = 0; i < rows; i++) {
            double s = 0;
            for (int k = rowStart[i]; k < rowStart[i + 1]; k++) {
                s += Math.abs(val[k]);
            }
            m = Math.max(m, s);
        }
        return m;
    }

    /** The 5-point Laplacian of a g×g grid (n = g²), rows first..first+rows-1. */
    static CsrMatrix laplace2d(int g, int first, int rows) {
        int n = g * g;
        Builder b = new Builder(n, first, rows);
        for (int r = first; r < first + rows; r++) {
            int i = r / g;
            int j = r % g;
            if (i > 0) {
                b.add(r - g, -1);
            }
            if (j > 0) {
                b.add(r - 1, -1);
            }
            b.add(r, 4);
            if (j < g - 1) {
                b.add(r + 1, -1);
            }
            if (i < g - 1) {
                b.add(r + g, -1);
            }
            b.endRow();
        }
        return b.build();
    }

    /** A random n×n matrix with about {@code perRow} entries per row, each row drawn from its own seed. */
    static CsrMatrix random(int n, int perRow, long seed, int first, int rows) {
        Builder b = new Builder(n, first, rows);
        for (int r = first; r < first + rows; r++) {
            Random rnd = new Random(seed * 1_000_003L + r);
            int[] cols = new int[perRow + 1];
            cols[0] = r; // a diagonal entry in every row
            for (int k = 1; k <= perRow; k++) {
                cols[k] = rnd.nextInt(n);
            }
            int[] sorted = Arrays.stream(cols).sorted().distinct().toArray();
            for (int c : sorted) {
                b.add(c, rnd.nextDouble() * 2 - 1);
            }
            b.endRow();
        }
        return b.build();
    }

    /**
     * Reads rows first..first+rows-1 of a square matrix in Matrix Market coordinate format (real, integer or pattern;
     * general or symmetric). Duplicate entries add up, as the format says.
     *
     * @param first the first row to keep, or -1 to keep every row
     */
    static CsrMatrix readMatrixMarket(Path file, int first, int rows) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.US_ASCII)) {
            String header = in.readLine();
            if (header == null || !header.toLowerCase(Locale.ROOT).startsWith("%%matrixmarket matrix coordinate")) {
                throw new IllegalArgumentException(file + ": not a Matrix Market coordinate matrix (first line: " + header + ")");
            }
            String[] h = header.toLowerCase(Locale.ROOT).trim().split("\\s+");
            String field = h.length > 3 ? h[3] : "";
            String symmetry = h.length > 4 ? h[4] : "";
            if (!field.equals("real") && !field.equals("integer") && !field.equals("pattern")) {
                throw new IllegalArgumentException(file + ": field '" + field + "' is not supported (real, integer, pattern)");
            }
            if (!symmetry.equals("general") && !symmetry.equals("symmetric")) {
                throw new IllegalArgumentException(file + ": symmetry '" + symmetry + "' is not supported (general, symmetric)");
            }
            String line;
            int lineNo = 1;
            do {
                line = in.readLine();
                lineNo++;
            } while (line != null && (line.startsWith("%") || line.isBlank()));
            if (line == null) {
                throw new IllegalArgumentException(file + ": no size line");
            }
            String[] size = line.trim().split("\\s+");
            int n = Integer.parseInt(size[0]);
            if (n != Integer.parseInt(size[1])) {
                throw new IllegalArgumentException(file + ": the matrix is " + size[0] + "x" + size[1] + "; spmv iterates y = A·x and needs a square one");
            }
            long entries = Long.parseLong(size[2]);
            if (first < 0) {
                first = 0;
                rows = n;
            }
            List<long[]> kept = new ArrayList<>();
            List<Double> values = new ArrayList<>();
            for (long e = 0; e < entries; e++) {
                line = in.readLine();
                lineNo++;
                if (line == null) {
                    throw new IllegalArgumentException(file + ": " + entries + " entries announced, " + e + " found");
                }
                String[] t = line.trim().split("\\s+");
                int i = Integer.parseInt(t[0]) - 1;
                int j = Integer.parseInt(t[1]) - 1;
                if (i < 0 || i >= n || j < 0 || j >= n) {
                    throw new IllegalArgumentException(file + ":" + lineNo + ": entry (" + t[0] + ", " + t[1] + ") is outside 1.." + n);
                }
                double v = field.equals("pattern") ? 1.0 : Double.parseDouble(t[2]);
                keep(kept, values, i, j, v, first, rows);
                if (symmetry.equals("symmetric") && i != j) {
                    keep(kept, values, j, i, v, first, rows);
                }
            }
            Integer[] order = new Integer[kept.size()];
            for (int k = 0; k < order.length; k++) {
                order[k] = k;
            }
            Arrays.sort(order, (a, b) -> {
                int c = Long.compare(kept.get(a)[0], kept.get(b)[0]);
                return c != 0 ? c : Long.compare(kept.get(a)[1], kept.get(b)[1]);
            });
            Builder b = new Builder(n, first, rows);
            int row = first;
            for (int k : order) {
                int i = (int) kept.get(k)[0];
                while (row < i) {
                    b.endRow();
                    row++;
                }
                b.addOrSum((int) kept.get(k)[1], values.get(k));
            }
            while (row < first + rows) {
                b.endRow();
                row++;
            }
            return b.build();
        }
    }

    private static void keep(List<long[]> kept, List<Double> values, int i, int j, double v, int first, int rows) {
        if (i >= first && i < first + rows) {
            kept.add(new long[] {i, j});
            values.add(v);
        }
    }

    /** Appends rows in order. */
    private static final class Builder {
        private final int n;
        private final int first;
        private final int rows;
        private final int[] rowStart;
        private int row;
        private int[] col = new int[16];
        private double[] val = new double[16];
        private int nnz;

        Builder(int n, int first, int rows) {
            this.n = n;
            this.first = first;
            this.rows = rows;
            this.rowStart = new int[rows + 1];
        }

        void add(int c, double v) {
            if (nnz == col.length) {
                col = Arrays.copyOf(col, nnz * 2);
                val = Arrays.copyOf(val, nnz * 2);
            }
            col[nnz] = c;
            val[nnz++] = v;
        }

        /** Adds to the previous entry when it has the same column (a duplicate in a Matrix Market file). */
        void addOrSum(int c, double v) {
            if (nnz > rowStart[row] && col[nnz - 1] == c) {
                val[nnz - 1] += v;
            } else {
                add(c, v);
            }
        }

        void endRow() {
            rowStart[++row] = nnz;
        }

        CsrMatrix build() {
            return new CsrMatrix(n, first, rows, rowStart, Arrays.copyOf(col, nnz), Arrays.copyOf(val, nnz));
        }
    }
}
