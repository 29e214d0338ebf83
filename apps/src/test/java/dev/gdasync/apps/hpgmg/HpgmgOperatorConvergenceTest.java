package dev.gdasync.apps.hpgmg;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fv4 operator against a manufactured solution: u = sin(2 pi x) sin(2 pi y) sin(2 pi z) with the
 * problem's own variable coefficient beta = 1 + 1/4 sin sin sin. The operator applied to u's exact cell
 * averages must match the exact cell averages of -div(beta grad u) with an error that falls at 4th order
 * as the grid is refined (16^3, 32^3, 64^3, one box each). Ghost cells hold the exact averages of u's odd
 * extension, so every cell is checked, boundary neighbours included.
 */
class HpgmgOperatorConvergenceTest {
    private static final double TWO_PI = 2.0 * Math.PI;
    /** 3-point Gauss-Legendre on [-1/2, 1/2]: exact to degree 5, far below the operator's error here. */
    private static final double[] GAUSS_X = {-0.5 * Math.sqrt(0.6), 0.0, 0.5 * Math.sqrt(0.6)};
    private static final double[] GAUSS_W = {5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0};

    @Test
    void fv4OperatorConvergesAtFourthOrder() {
        double e16 = maxError(16);
        double e32 = maxError(32);
        double e64 = maxError(64);
        double order1 = Math.log(e16 / e32) / Math.log(2);
        double order2 = Math.log(e32 / e64) / Math.log(2);
        System.out.printf("fv4 operator, max error of A u - f: 16^3 %.3e, 32^3 %.3e, 64^3 %.3e; orders %.2f, %.2f%n",
                e16, e32, e64, order1, order2);
        assertTrue(order1 > 3.7 && order1 < 4.5, "order from 16^3 to 32^3: " + order1);
        assertTrue(order2 > 3.8 && order2 < 4.3, "order from 32^3 to 64^3: " + order2);
    }

    @Test
    void aSecondOrderStencilWouldBeCaught() {
        // The same check on the classic 7-point operator (no 1/12 corrections) sees order 2: the test can tell.
        double e16 = maxErrorOfSevenPoint(16);
        double e32 = maxErrorOfSevenPoint(32);
        double order = Math.log(e16 / e32) / Math.log(2);
        assertTrue(order > 1.8 && order < 2.3, "7-point order: " + order);
    }

    private static double maxError(int n) {
        Level l = manufactured(n);
        new HostOperators().applyOp(l, Level.VECTOR_TEMP, Level.VECTOR_U, 0.0, 1.0);
        return maxDifference(l, Level.VECTOR_TEMP, Level.VECTOR_F);
    }

    private static double maxErrorOfSevenPoint(int n) {
        Level l = manufactured(n);
        Box b = l.boxes[0];
        double[] u = b.v[Level.VECTOR_U], out = b.v[Level.VECTOR_TEMP];
        double[] bi = b.v[Level.VECTOR_BETA_I], bj = b.v[Level.VECTOR_BETA_J], bk = b.v[Level.VECTOR_BETA_K];
        int js = b.jStride, ks = b.kStride;
        double h2inv = 1.0 / (l.h * l.h);
        forCells(b, 0, ijk -> out[ijk] = -h2inv * (
                bi[ijk] * (u[ijk - 1] - u[ijk]) + bi[ijk + 1] * (u[ijk + 1] - u[ijk])
                        + bj[ijk] * (u[ijk - js] - u[ijk]) + bj[ijk + js] * (u[ijk + js] - u[ijk])
                        + bk[ijk] * (u[ijk - ks] - u[ijk]) + bk[ijk + ks] * (u[ijk + ks] - u[ijk])));
        return maxDifference(l, Level.VECTOR_TEMP, Level.VECTOR_F);
    }

    /** One n^3 box: U = exact cell averages (ghosts too), betas on faces as the problem sets them, F = exact. */
    private static Level manufactured(int n) {
        Level l = new Level(0, 1, n, MultiGrid.RADIUS, Level.VECTORS_RESERVED, 0, 1);
        double h = 1.0 / n;
        l.h = h;
        Box b = l.boxes[0];
        int g = b.ghosts;
        for (int k = -g; k < n + g; k++) {
            for (int j = -g; j < n + g; j++) {
                for (int i = -g; i < n + g; i++) {
                    int ijk = b.base + i + j * b.jStride + k * b.kStride;
                    double x = h * (i + 0.5), y = h * (j + 0.5), z = h * (k + 0.5);
                    b.v[Level.VECTOR_U][ijk] = sineAverage(i, h) * sineAverage(j, h) * sineAverage(k, h);
                    b.v[Level.VECTOR_BETA_I][ijk] = Problem.beta(x - h * 0.5, y, z, h, false, true, true);
                    b.v[Level.VECTOR_BETA_J][ijk] = Problem.beta(x, y - h * 0.5, z, h, true, false, true);
                    b.v[Level.VECTOR_BETA_K][ijk] = Problem.beta(x, y, z - h * 0.5, h, true, true, false);
                    if (i >= 0 && i < n && j >= 0 && j < n && k >= 0 && k < n) {
                        b.v[Level.VECTOR_F][ijk] = cellAverageOfRhs(x, y, z, h);
                    }
                }
            }
        }
        return l;
    }

    /** @return the exact average of sin(2 pi x) over cell i */
    private static double sineAverage(int i, double h) {
        return (Math.cos(TWO_PI * i * h) - Math.cos(TWO_PI * (i + 1) * h)) / (TWO_PI * h);
    }

    /** @return the cell average of -div(beta grad u), by Gauss quadrature of its closed form */
    private static double cellAverageOfRhs(double xc, double yc, double zc, double h) {
        double sum = 0;
        for (int a = 0; a < 3; a++) {
            for (int c = 0; c < 3; c++) {
                for (int d = 0; d < 3; d++) {
                    sum += GAUSS_W[a] * GAUSS_W[c] * GAUSS_W[d]
                            * rhs(xc + h * GAUSS_X[a], yc + h * GAUSS_X[c], zc + h * GAUSS_X[d]);
                }
            }
        }
        return sum;
    }

    /** -div(beta grad u) = 12 pi^2 beta u - grad beta . grad u for u = sss, beta = 1 + sss/4. */
    private static double rhs(double x, double y, double z) {
        double sx = Math.sin(TWO_PI * x), sy = Math.sin(TWO_PI * y), sz = Math.sin(TWO_PI * z);
        double cx = Math.cos(TWO_PI * x), cy = Math.cos(TWO_PI * y), cz = Math.cos(TWO_PI * z);
        double u = sx * sy * sz;
        double beta = 1.0 + 0.25 * u;
        double gx = cx * sy * sz, gy = sx * cy * sz, gz = sx * sy * cz;
        double gradDot = 0.25 * TWO_PI * TWO_PI * (gx * gx + gy * gy + gz * gz);
        return 3.0 * TWO_PI * TWO_PI * beta * u - gradDot;
    }

    private static double maxDifference(Level l, int a, int b) {
        Box box = l.boxes[0];
        double[] max = {0};
        forCells(box, 0, ijk -> max[0] = Math.max(max[0], Math.abs(box.v[a][ijk] - box.v[b][ijk])));
        return max[0];
    }

    private interface Cell {
        void at(int ijk);
    }

    private static void forCells(Box b, int pad, Cell c) {
        for (int k = -pad; k < b.dim + pad; k++) {
            for (int j = -pad; j < b.dim + pad; j++) {
                for (int i = -pad; i < b.dim + pad; i++) {
                    c.at(b.base + i + j * b.jStride + k * b.kStride);
                }
            }
        }
    }
}
