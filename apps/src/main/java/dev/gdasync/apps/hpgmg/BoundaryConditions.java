package dev.gdasync.apps.hpgmg;

/**
 * Homogeneous Dirichlet boundary conditions of boundary_fv.c on one region: ghost cells outside the domain
 * are extrapolated from the interior, 2nd order (v2) or 4th order (v4), faces, edges and corners alike;
 * and extrapolate_betas for the face coefficients.
 */
final class BoundaryConditions {
    private static final double ONE_TWELFTH = 1.0 / 12.0;

    private BoundaryConditions() {
    }

    static void v2(Box bx, double[] x, BcRegion r) {
        int js = bx.jStride, ks = bx.kStride, o = bx.base, n = bx.dim;
        int ilo = r.ilo(), jlo = r.jlo(), klo = r.klo();
        int di = r.dimI(), dj = r.dimJ(), dk = r.dimK();
        int st = r.normal();
        if (bx.ghosts > 1) {
            for (int k = 0; k < dk; k++) {
                for (int j = 0; j < dj; j++) {
                    for (int i = 0; i < di; i++) {
                        x[o + (i + ilo) + (j + jlo) * js + (k + klo) * ks] = 0.0;
                    }
                }
            }
        }
        if (Shape.FACES[st] == 1) {
            int[] f = face(st, ilo, jlo, klo, di, dj, dk, js, ks, n);
            int rlo = f[0], dimR = f[1], rS = f[2], slo = f[3], dimS = f[4], sS = f[5], t = f[6], tS = f[7], dt = f[8];
            for (int s = 0; s < dimS; s++) {
                for (int rr = 0; rr < dimR; rr++) {
                    int ijk = o + (rr + rlo) * rS + (s + slo) * sS + t * tS;
                    x[ijk] = -2.5 * x[ijk + dt] + 0.5 * x[ijk + 2 * dt];
                }
            }
        } else if (Shape.EDGES[st] == 1) {
            int[] e = edge(st, ilo, jlo, klo, di, dj, dk, js, ks, n);
            int rlo = e[0], dimR = e[1], rS = e[2], s = e[3], sS = e[4], t = e[5], tS = e[6], ds = e[7], dt = e[8];
            for (int rr = 0; rr < dimR; rr++) {
                int ijk = o + (rr + rlo) * rS + s * sS + t * tS;
                x[ijk] = 6.25 * x[ijk + ds + dt]
                        - 1.25 * x[ijk + 2 * ds + dt]
                        - 1.25 * x[ijk + ds + 2 * dt]
                        + 0.25 * x[ijk + 2 * ds + 2 * dt];
            }
        } else if (Shape.CORNERS[st] == 1) {
            int[] c = corner(st, js, ks, n);
            int ijk = o + c[0] + c[1] * js + c[2] * ks;
            int a = c[3], b = c[4], d = c[5];
            x[ijk] = -15.625 * x[ijk + a + b + d]
                    + 3.125 * x[ijk + 2 * a + b + d]
                    + 3.125 * x[ijk + a + 2 * b + d]
                    + 3.125 * x[ijk + a + b + 2 * d]
                    - 0.625 * x[ijk + 2 * a + 2 * b + d]
                    - 0.625 * x[ijk + a + 2 * b + 2 * d]
                    - 0.625 * x[ijk + 2 * a + b + 2 * d]
                    + 0.125 * x[ijk + 2 * a + 2 * b + 2 * d];
        }
    }

    private static double n4(double x1, double x2, double x3, double x4) {
        return ONE_TWELFTH * (-77.0 * x1 + 43.0 * x2 - 17.0 * x3 + 3.0 * x4);
    }

    private static double f4(double x1, double x2, double x3, double x4) {
        return ONE_TWELFTH * (-505.0 * x1 + 335.0 * x2 - 145.0 * x3 + 27.0 * x4);
    }

    static void v4(Box bx, double[] x, BcRegion r) {
        int js = bx.jStride, ks = bx.kStride, o = bx.base, n = bx.dim;
        int ilo = r.ilo(), jlo = r.jlo(), klo = r.klo();
        int di = r.dimI(), dj = r.dimJ(), dk = r.dimK();
        int st = r.normal();
        if (bx.ghosts > 2) {
            for (int k = 0; k < dk; k++) {
                for (int j = 0; j < dj; j++) {
                    for (int i = 0; i < di; i++) {
                        x[o + (i + ilo) + (j + jlo) * js + (k + klo) * ks] = 0.0;
                    }
                }
            }
        }
        if (Shape.FACES[st] == 1) {
            int[] f = face(st, ilo, jlo, klo, di, dj, dk, js, ks, n);
            int rlo = f[0], dimR = f[1], rS = f[2], slo = f[3], dimS = f[4], sS = f[5], t = f[6], tS = f[7], dt = f[8];
            for (int s = 0; s < dimS; s++) {
                for (int rr = 0; rr < dimR; rr++) {
                    int ijk = o + (rr + rlo) * rS + (s + slo) * sS + t * tS;
                    double x1 = x[ijk + dt], x2 = x[ijk + 2 * dt], x3 = x[ijk + 3 * dt], x4 = x[ijk + 4 * dt];
                    x[ijk] = n4(x1, x2, x3, x4);
                    x[ijk - dt] = f4(x1, x2, x3, x4);
                }
            }
        } else if (Shape.EDGES[st] == 1) {
            int[] e = edge(st, ilo, jlo, klo, di, dj, dk, js, ks, n);
            int rlo = e[0], dimR = e[1], rS = e[2], s = e[3], sS = e[4], t = e[5], tS = e[6], ds = e[7], dt = e[8];
            for (int rr = 0; rr < dimR; rr++) {
                int ijk = o + (rr + rlo) * rS + s * sS + t * tS;
                double[] nn = new double[4], ff = new double[4];
                for (int q = 1; q <= 4; q++) {
                    double a1 = x[ijk + ds + q * dt], a2 = x[ijk + 2 * ds + q * dt];
                    double a3 = x[ijk + 3 * ds + q * dt], a4 = x[ijk + 4 * ds + q * dt];
                    nn[q - 1] = n4(a1, a2, a3, a4);
                    ff[q - 1] = f4(a1, a2, a3, a4);
                }
                x[ijk] = n4(nn[0], nn[1], nn[2], nn[3]);
                x[ijk - dt] = f4(nn[0], nn[1], nn[2], nn[3]);
                x[ijk - ds] = n4(ff[0], ff[1], ff[2], ff[3]);
                x[ijk - ds - dt] = f4(ff[0], ff[1], ff[2], ff[3]);
            }
        } else if (Shape.CORNERS[st] == 1) {
            int[] c = corner(st, js, ks, n);
            int ijk = o + c[0] + c[1] * js + c[2] * ks;
            int a = c[3], b = c[4], d = c[5];
            // n[jj][kk] / f[jj][kk]: extrapolated in i at (j offset jj+1, k offset kk+1)
            double[][] nI = new double[4][4], fI = new double[4][4];
            for (int kk = 1; kk <= 4; kk++) {
                for (int jj = 1; jj <= 4; jj++) {
                    double x1 = x[ijk + a + jj * b + kk * d], x2 = x[ijk + 2 * a + jj * b + kk * d];
                    double x3 = x[ijk + 3 * a + jj * b + kk * d], x4 = x[ijk + 4 * a + jj * b + kk * d];
                    nI[jj - 1][kk - 1] = n4(x1, x2, x3, x4);
                    fI[jj - 1][kk - 1] = f4(x1, x2, x3, x4);
                }
            }
            double[] nn = new double[4], nf = new double[4], fn = new double[4], ffa = new double[4];
            for (int kk = 0; kk < 4; kk++) {
                nn[kk] = n4(nI[0][kk], nI[1][kk], nI[2][kk], nI[3][kk]);
                nf[kk] = f4(nI[0][kk], nI[1][kk], nI[2][kk], nI[3][kk]);
                fn[kk] = n4(fI[0][kk], fI[1][kk], fI[2][kk], fI[3][kk]);
                ffa[kk] = f4(fI[0][kk], fI[1][kk], fI[2][kk], fI[3][kk]);
            }
            x[ijk] = n4(nn[0], nn[1], nn[2], nn[3]);
            x[ijk - d] = f4(nn[0], nn[1], nn[2], nn[3]);
            x[ijk - b] = n4(nf[0], nf[1], nf[2], nf[3]);
            x[ijk - b - d] = f4(nf[0], nf[1], nf[2], nf[3]);
            x[ijk - a] = n4(fn[0], fn[1], fn[2], fn[3]);
            x[ijk - a - d] = f4(fn[0], fn[1], fn[2], fn[3]);
            x[ijk - a - b] = n4(ffa[0], ffa[1], ffa[2], ffa[3]);
            x[ijk - a - b - d] = f4(ffa[0], ffa[1], ffa[2], ffa[3]);
        }
    }

    /** rlo, dimR, rStride, slo, dimS, sStride, t, tStride, dt of a face subtype. */
    private static int[] face(int st, int ilo, int jlo, int klo, int di, int dj, int dk, int js, int ks, int n) {
        return switch (st) {
            case 4 -> new int[]{ilo, di, 1, jlo, dj, js, -1, ks, ks};
            case 10 -> new int[]{ilo, di, 1, klo, dk, ks, -1, js, js};
            case 12 -> new int[]{jlo, dj, js, klo, dk, ks, -1, 1, 1};
            case 14 -> new int[]{jlo, dj, js, klo, dk, ks, n, 1, -1};
            case 16 -> new int[]{ilo, di, 1, klo, dk, ks, n, js, -js};
            case 22 -> new int[]{ilo, di, 1, jlo, dj, js, n, ks, -ks};
            default -> throw new IllegalStateException("not a face: " + st);
        };
    }

    /** rlo, dimR, rStride, s, sStride, t, tStride, ds, dt of an edge subtype. */
    private static int[] edge(int st, int ilo, int jlo, int klo, int di, int dj, int dk, int js, int ks, int n) {
        return switch (st) {
            case 1 -> new int[]{ilo, di, 1, -1, js, -1, ks, js, ks};
            case 3 -> new int[]{jlo, dj, js, -1, 1, -1, ks, 1, ks};
            case 5 -> new int[]{jlo, dj, js, n, 1, -1, ks, -1, ks};
            case 7 -> new int[]{ilo, di, 1, n, js, -1, ks, -js, ks};
            case 9 -> new int[]{klo, dk, ks, -1, 1, -1, js, 1, js};
            case 11 -> new int[]{klo, dk, ks, n, 1, -1, js, -1, js};
            case 15 -> new int[]{klo, dk, ks, -1, 1, n, js, 1, -js};
            case 17 -> new int[]{klo, dk, ks, n, 1, n, js, -1, -js};
            case 19 -> new int[]{ilo, di, 1, -1, js, n, ks, js, -ks};
            case 21 -> new int[]{jlo, dj, js, -1, 1, n, ks, 1, -ks};
            case 23 -> new int[]{jlo, dj, js, n, 1, n, ks, -1, -ks};
            case 25 -> new int[]{ilo, di, 1, n, js, n, ks, -js, -ks};
            default -> throw new IllegalStateException("not an edge: " + st);
        };
    }

    /** i, j, k, di, dj, dk (as strides) of a corner subtype. */
    private static int[] corner(int st, int js, int ks, int n) {
        return switch (st) {
            case 0 -> new int[]{-1, -1, -1, 1, js, ks};
            case 2 -> new int[]{n, -1, -1, -1, js, ks};
            case 6 -> new int[]{-1, n, -1, 1, -js, ks};
            case 8 -> new int[]{n, n, -1, -1, -js, ks};
            case 18 -> new int[]{-1, -1, n, 1, js, -ks};
            case 20 -> new int[]{n, -1, n, -1, js, -ks};
            case 24 -> new int[]{-1, n, n, 1, -js, -ks};
            case 26 -> new int[]{n, n, n, -1, -js, -ks};
            default -> throw new IllegalStateException("not a corner: " + st);
        };
    }

    static void extrapolateBetas(Box bx, BcRegion r) {
        int js = bx.jStride, ks = bx.kStride, o = bx.base, n = bx.dim;
        int ilo = r.ilo(), jlo = r.jlo(), klo = r.klo();
        int subtype = 13;
        if (ilo < 0) subtype -= 1;
        if (jlo < 0) subtype -= 3;
        if (klo < 0) subtype -= 9;
        if (ilo >= n) subtype += 1;
        if (jlo >= n) subtype += 3;
        if (klo >= n) subtype += 9;
        int normal = 26 - subtype;
        int di = (normal % 3) - 1;
        int dj = ((normal % 9) / 3) - 1;
        int dk = (normal / 9) - 1;
        int biS = dj * js + dk * ks;
        int bjS = di + dk * ks;
        int bkS = di + dj * js;
        double[] bi = bx.v[Level.VECTOR_BETA_I], bj = bx.v[Level.VECTOR_BETA_J], bk = bx.v[Level.VECTOR_BETA_K];
        boolean doI = subtype != 14 && subtype != 12;
        boolean doJ = subtype != 16 && subtype != 10;
        boolean doK = subtype != 22 && subtype != 4;
        for (int k = 0; k < r.dimK(); k++) {
            for (int j = 0; j < r.dimJ(); j++) {
                for (int i = 0; i < r.dimI(); i++) {
                    int ijk = o + (i + ilo) + (j + jlo) * js + (k + klo) * ks;
                    if (n >= 5) {
                        if (doI) bi[ijk] = 5.0 * bi[ijk + biS] - 10.0 * bi[ijk + 2 * biS] + 10.0 * bi[ijk + 3 * biS] - 5.0 * bi[ijk + 4 * biS] + bi[ijk + 5 * biS];
                        if (doJ) bj[ijk] = 5.0 * bj[ijk + bjS] - 10.0 * bj[ijk + 2 * bjS] + 10.0 * bj[ijk + 3 * bjS] - 5.0 * bj[ijk + 4 * bjS] + bj[ijk + 5 * bjS];
                        if (doK) bk[ijk] = 5.0 * bk[ijk + bkS] - 10.0 * bk[ijk + 2 * bkS] + 10.0 * bk[ijk + 3 * bkS] - 5.0 * bk[ijk + 4 * bkS] + bk[ijk + 5 * bkS];
                    } else if (n >= 4) {
                        if (doI) bi[ijk] = 4.0 * bi[ijk + biS] - 6.0 * bi[ijk + 2 * biS] + 4.0 * bi[ijk + 3 * biS] - bi[ijk + 4 * biS];
                        if (doJ) bj[ijk] = 4.0 * bj[ijk + bjS] - 6.0 * bj[ijk + 2 * bjS] + 4.0 * bj[ijk + 3 * bjS] - bj[ijk + 4 * bjS];
                        if (doK) bk[ijk] = 4.0 * bk[ijk + bkS] - 6.0 * bk[ijk + 2 * bkS] + 4.0 * bk[ijk + 3 * bkS] - bk[ijk + 4 * bkS];
                    } else if (n >= 2) {
                        if (doI) bi[ijk] = 2.0 * bi[ijk + biS] - bi[ijk + 2 * biS];
                        if (doJ) bj[ijk] = 2.0 * bj[ijk + bjS] - bj[ijk + 2 * bjS];
                        if (doK) bk[ijk] = 2.0 * bk[ijk + bkS] - bk[ijk + 2 * bkS];
                    }
                }
            }
        }
    }
}
