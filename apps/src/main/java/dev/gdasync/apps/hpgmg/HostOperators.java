package dev.gdasync.apps.hpgmg;

/**
 * The host backend: upstream's kernels on Java arrays, with the floating-point operations in upstream's
 * order (Java's double arithmetic is IEEE without contraction, as gcc's x86-64 code without FMA), so every
 * cell gets the bits the C code gives it.
 */
final class HostOperators implements Operators {
    static final double TWELFTH = 0.0833333333333333333;

    // ---- BLAS1 ----

    @Override
    public void zero(Level l, int id) {
        for (Box b : l.boxes) {
            java.util.Arrays.fill(b.v[id], 0.0);
        }
    }

    @Override
    public void scale(Level l, int c, double s, int a) {
        for (Box b : l.boxes) {
            double[] gc = b.v[c], ga = b.v[a];
            forInterior(b, ijk -> gc[ijk] = s * ga[ijk]);
        }
    }

    @Override
    public void mul(Level l, int c, double s, int a, int bb) {
        for (Box b : l.boxes) {
            double[] gc = b.v[c], ga = b.v[a], gb = b.v[bb];
            forInterior(b, ijk -> gc[ijk] = s * ga[ijk] * gb[ijk]);
        }
    }

    @Override
    public void add(Level l, int c, double sa, int a, double sb, int bb) {
        for (Box b : l.boxes) {
            double[] gc = b.v[c], ga = b.v[a], gb = b.v[bb];
            forInterior(b, ijk -> gc[ijk] = sa * ga[ijk] + sb * gb[ijk]);
        }
    }

    @Override
    public void color(Level l, int id, int colors, int ic, int jc, int kc) {
        for (Box b : l.boxes) {
            double[] g = b.v[id];
            int n = b.dim;
            for (int k = 0; k < n; k++) {
                double sk = ((k + b.lowK + kc) % colors) == 0 ? 1.0 : 0.0;
                for (int j = 0; j < n; j++) {
                    double sj = ((j + b.lowJ + jc) % colors) == 0 ? 1.0 : 0.0;
                    for (int i = 0; i < n; i++) {
                        double si = ((i + b.lowI + ic) % colors) == 0 ? 1.0 : 0.0;
                        g[b.base + i + j * b.jStride + k * b.kStride] = si * sj * sk;
                    }
                }
            }
        }
    }

    @Override
    public void dotPartials(Level l, int a, int bb, double[] out) {
        int t = 0;
        for (Box b : l.boxes) {
            double[] ga = b.v[a], gb = b.v[bb];
            int n = b.dim;
            for (int kk = 0; kk < n; kk += Level.TILE) {
                for (int jj = 0; jj < n; jj += Level.TILE) {
                    double sum = 0.0;
                    int kh = Math.min(n, kk + Level.TILE), jh = Math.min(n, jj + Level.TILE);
                    for (int k = kk; k < kh; k++) {
                        for (int j = jj; j < jh; j++) {
                            int row = b.base + j * b.jStride + k * b.kStride;
                            for (int i = 0; i < n; i++) {
                                sum += ga[row + i] * gb[row + i];
                            }
                        }
                    }
                    out[t++] = sum;
                }
            }
        }
    }

    @Override
    public double normLocal(Level l, int id) {
        double max = 0.0;
        for (Box b : l.boxes) {
            double[] g = b.v[id];
            int n = b.dim;
            for (int k = 0; k < n; k++) {
                for (int j = 0; j < n; j++) {
                    int row = b.base + j * b.jStride + k * b.kStride;
                    for (int i = 0; i < n; i++) {
                        double f = Math.abs(g[row + i]);
                        if (f > max) {
                            max = f;
                        }
                    }
                }
            }
        }
        return max;
    }

    private interface CellOp {
        void at(int ijk);
    }

    private static void forInterior(Box b, CellOp op) {
        int n = b.dim;
        for (int k = 0; k < n; k++) {
            for (int j = 0; j < n; j++) {
                int row = b.base + j * b.jStride + k * b.kStride;
                for (int i = 0; i < n; i++) {
                    op.at(row + i);
                }
            }
        }
    }

    // ---- the fv4 operator ----

    /** apply_op_ijk of operators.fv4.c, variable coefficient, Poisson (no alpha term). */
    static double applyOpIjk(double[] x, double[] bi, double[] bj, double[] bk, int ijk, int js, int ks, double b,
                             double h2inv) {
        return -b * h2inv * (
                TWELFTH * (
                        +bi[ijk] * (15.0 * (x[ijk - 1] - x[ijk]) - (x[ijk - 2] - x[ijk + 1]))
                        + bi[ijk + 1] * (15.0 * (x[ijk + 1] - x[ijk]) - (x[ijk + 2] - x[ijk - 1]))
                        + bj[ijk] * (15.0 * (x[ijk - js] - x[ijk]) - (x[ijk - 2 * js] - x[ijk + js]))
                        + bj[ijk + js] * (15.0 * (x[ijk + js] - x[ijk]) - (x[ijk + 2 * js] - x[ijk - js]))
                        + bk[ijk] * (15.0 * (x[ijk - ks] - x[ijk]) - (x[ijk - 2 * ks] - x[ijk + ks]))
                        + bk[ijk + ks] * (15.0 * (x[ijk + ks] - x[ijk]) - (x[ijk + 2 * ks] - x[ijk - ks]))
                )
                + 0.25 * TWELFTH * (
                        +(bi[ijk + js] - bi[ijk - js]) * (x[ijk - 1 + js] - x[ijk + js] - x[ijk - 1 - js] + x[ijk - js])
                        + (bi[ijk + ks] - bi[ijk - ks]) * (x[ijk - 1 + ks] - x[ijk + ks] - x[ijk - 1 - ks] + x[ijk - ks])
                        + (bj[ijk + 1] - bj[ijk - 1]) * (x[ijk - js + 1] - x[ijk + 1] - x[ijk - js - 1] + x[ijk - 1])
                        + (bj[ijk + ks] - bj[ijk - ks]) * (x[ijk - js + ks] - x[ijk + ks] - x[ijk - js - ks] + x[ijk - ks])
                        + (bk[ijk + 1] - bk[ijk - 1]) * (x[ijk - ks + 1] - x[ijk + 1] - x[ijk - ks - 1] + x[ijk - 1])
                        + (bk[ijk + js] - bk[ijk - js]) * (x[ijk - ks + js] - x[ijk + js] - x[ijk - ks - js] + x[ijk - js])

                        + (bi[ijk + 1 + js] - bi[ijk + 1 - js]) * (x[ijk + 1 + js] - x[ijk + js] - x[ijk + 1 - js] + x[ijk - js])
                        + (bi[ijk + 1 + ks] - bi[ijk + 1 - ks]) * (x[ijk + 1 + ks] - x[ijk + ks] - x[ijk + 1 - ks] + x[ijk - ks])
                        + (bj[ijk + js + 1] - bj[ijk + js - 1]) * (x[ijk + js + 1] - x[ijk + 1] - x[ijk + js - 1] + x[ijk - 1])
                        + (bj[ijk + js + ks] - bj[ijk + js - ks]) * (x[ijk + js + ks] - x[ijk + ks] - x[ijk + js - ks] + x[ijk - ks])
                        + (bk[ijk + ks + 1] - bk[ijk + ks - 1]) * (x[ijk + ks + 1] - x[ijk + 1] - x[ijk + ks - 1] + x[ijk - 1])
                        + (bk[ijk + ks + js] - bk[ijk + ks - js]) * (x[ijk + ks + js] - x[ijk + js] - x[ijk + ks - js] + x[ijk - js])
                )
        );
    }

    private static double h2inv(Level l) {
        return 1.0 / (l.h * l.h);
    }

    @Override
    public void applyOp(Level l, int axId, int xId, double a, double b) {
        double h2inv = h2inv(l);
        for (Box bx : l.boxes) {
            double[] x = bx.v[xId], ax = bx.v[axId];
            double[] bi = bx.v[Level.VECTOR_BETA_I], bj = bx.v[Level.VECTOR_BETA_J], bk = bx.v[Level.VECTOR_BETA_K];
            int js = bx.jStride, ks = bx.kStride;
            forInterior(bx, ijk -> ax[ijk] = applyOpIjk(x, bi, bj, bk, ijk, js, ks, b, h2inv));
        }
    }

    @Override
    public void residual(Level l, int resId, int xId, int rhsId, double a, double b) {
        double h2inv = h2inv(l);
        for (Box bx : l.boxes) {
            double[] x = bx.v[xId], res = bx.v[resId], rhs = bx.v[rhsId];
            double[] bi = bx.v[Level.VECTOR_BETA_I], bj = bx.v[Level.VECTOR_BETA_J], bk = bx.v[Level.VECTOR_BETA_K];
            int js = bx.jStride, ks = bx.kStride;
            forInterior(bx, ijk -> res[ijk] = rhs[ijk] - applyOpIjk(x, bi, bj, bk, ijk, js, ks, b, h2inv));
        }
    }

    @Override
    public void gsrbSweep(Level l, int xnId, int xnp1Id, int rhsId, int s, double a, double b) {
        double h2inv = h2inv(l);
        for (Box bx : l.boxes) {
            double[] xn = bx.v[xnId], xnp1 = bx.v[xnp1Id], rhs = bx.v[rhsId], dinv = bx.v[Level.VECTOR_DINV];
            double[] bi = bx.v[Level.VECTOR_BETA_I], bj = bx.v[Level.VECTOR_BETA_J], bk = bx.v[Level.VECTOR_BETA_K];
            int js = bx.jStride, ks = bx.kStride, n = bx.dim;
            int color000 = (bx.lowI ^ bx.lowJ ^ bx.lowK ^ s) & 1;
            for (int k = 0; k < n; k++) {
                for (int j = 0; j < n; j++) {
                    int row = bx.base + j * js + k * ks;
                    System.arraycopy(xn, row, xnp1, row, n);
                    for (int i = (j ^ k ^ color000) & 1; i < n; i += 2) {
                        int ijk = row + i;
                        double ax = applyOpIjk(xn, bi, bj, bk, ijk, js, ks, b, h2inv);
                        xnp1[ijk] = xn[ijk] + dinv[ijk] * (rhs[ijk] - ax);
                    }
                }
            }
        }
    }

    @Override
    public void diagonalAccumulate(Level l, int xId, double a, double b) {
        double h2inv = h2inv(l);
        for (Box bx : l.boxes) {
            double[] x = bx.v[xId], aii = bx.v[Level.VECTOR_DINV], sum = bx.v[Level.VECTOR_E];
            double[] bi = bx.v[Level.VECTOR_BETA_I], bj = bx.v[Level.VECTOR_BETA_J], bk = bx.v[Level.VECTOR_BETA_K];
            int js = bx.jStride, ks = bx.kStride;
            forInterior(bx, ijk -> {
                double ax = applyOpIjk(x, bi, bj, bk, ijk, js, ks, b, h2inv);
                aii[ijk] += (x[ijk]) * ax;
                sum[ijk] += Math.abs((1.0 - x[ijk]) * ax);
            });
        }
    }

    @Override
    public void diagonalInvert(Level l, double a, double b) {
        double h2inv = h2inv(l);
        for (Box bx : l.boxes) {
            double[] aii = bx.v[Level.VECTOR_DINV], sum = bx.v[Level.VECTOR_E];
            forInterior(bx, ijk -> {
                if (aii[ijk] == 0.0) {
                    aii[ijk] = a + b * h2inv;
                }
                if (aii[ijk] >= 1.5 * sum[ijk]) {
                    sum[ijk] = 1.0 / (aii[ijk]);
                } else {
                    sum[ijk] = 1.0 / (aii[ijk] + 0.5 * sum[ijk]);
                }
                aii[ijk] = 1.0 / aii[ijk];
            });
        }
    }

    // ---- boundary conditions ----

    @Override
    public void applyBcs(Level l, int id, Shape shape, int order) {
        if (order == 4 && l.boxDim >= 4) {
            for (BcRegion r : l.bc.get(shape.ordinal())) {
                Box bx = l.boxes[r.box()];
                BoundaryConditions.v4(bx, bx.v[id], r);
            }
        } else {
            for (BcRegion r : l.bc.get(shape.ordinal())) {
                Box bx = l.boxes[r.box()];
                BoundaryConditions.v2(bx, bx.v[id], r);
            }
        }
    }

    @Override
    public void extrapolateBetas(Level l) {
        for (BcRegion r : l.bc.get(Shape.BOX.ordinal())) {
            Box bx = l.boxes[r.box()];
            BoundaryConditions.extrapolateBetas(bx, r);
        }
    }

    // ---- block kernels ----

    @Override
    public void copy(Level l, int id, Block b) {
        double[] read;
        int r0, rj, rk;
        if (b.readBox >= 0) {
            Box bx = l.boxes[b.readBox];
            read = bx.v[id];
            rj = bx.jStride;
            rk = bx.kStride;
            r0 = bx.base + b.readI + b.readJ * rj + b.readK * rk;
        } else {
            read = b.readBuf;
            rj = b.dimI;
            rk = b.dimI * b.dimJ;
            r0 = b.readI;
        }
        double[] write;
        int w0, wj, wk;
        if (b.writeBox >= 0) {
            Box bx = l.boxes[b.writeBox];
            write = bx.v[id];
            wj = bx.jStride;
            wk = bx.kStride;
            w0 = bx.base + b.writeI + b.writeJ * wj + b.writeK * wk;
        } else {
            write = b.writeBuf;
            wj = b.dimI;
            wk = b.dimI * b.dimJ;
            w0 = b.writeI;
        }
        for (int k = 0; k < b.dimK; k++) {
            for (int j = 0; j < b.dimJ; j++) {
                System.arraycopy(read, r0 + j * rj + k * rk, write, w0 + j * wj + k * wk, b.dimI);
            }
        }
    }

    @Override
    public void increment(Level l, int id, double prescale, Block b) {
        double[] read = b.readBuf;
        int rj = b.dimI, rk = b.dimI * b.dimJ, r0 = b.readI;
        Box bx = l.boxes[b.writeBox];
        double[] write = bx.v[id];
        int wj = bx.jStride, wk = bx.kStride;
        int w0 = bx.base + b.writeI + b.writeJ * wj + b.writeK * wk;
        for (int k = 0; k < b.dimK; k++) {
            for (int j = 0; j < b.dimJ; j++) {
                for (int i = 0; i < b.dimI; i++) {
                    int w = w0 + i + j * wj + k * wk;
                    write[w] = prescale * write[w] + read[r0 + i + j * rj + k * rk];
                }
            }
        }
    }

    @Override
    public void restrict(Level coarse, int idc, Level fine, int idf, int type, Block b) {
        Box fb = fine.boxes[b.readBox];
        double[] read = fb.v[idf];
        int rj = fb.jStride, rk = fb.kStride;
        int r0 = fb.base + b.readI + b.readJ * rj + b.readK * rk;
        double[] write;
        int wj, wk, w0;
        if (b.writeBox >= 0) {
            Box cb = coarse.boxes[b.writeBox];
            write = cb.v[idc];
            wj = cb.jStride;
            wk = cb.kStride;
            w0 = cb.base + b.writeI + b.writeJ * wj + b.writeK * wk;
        } else {
            write = b.writeBuf;
            wj = b.dimI;
            wk = b.dimI * b.dimJ;
            w0 = b.writeI;
        }
        Restriction.block(type, read, r0, rj, rk, write, w0, wj, wk, b.dimI, b.dimJ, b.dimK);
    }

    @Override
    public void interpolate(Level fine, int idf, double prescale, Level coarse, int idc, Block b, int order) {
        Box cb = coarse.boxes[b.readBox];
        double[] read = cb.v[idc];
        int rj = cb.jStride, rk = cb.kStride;
        int r0 = cb.base + b.readI + b.readJ * rj + b.readK * rk;
        double[] write;
        int wj, wk, w0;
        if (b.writeBox >= 0) {
            Box fb = fine.boxes[b.writeBox];
            write = fb.v[idf];
            wj = fb.jStride;
            wk = fb.kStride;
            w0 = fb.base + b.writeI + b.writeJ * wj + b.writeK * wk;
        } else {
            write = b.writeBuf;
            wj = 2 * b.dimI;
            wk = 4 * b.dimI * b.dimJ;
            w0 = b.writeI;
        }
        if (order == 4) {
            Interpolation.v4(read, r0, rj, rk, write, w0, wj, wk, b.dimI, b.dimJ, b.dimK, prescale);
        } else {
            Interpolation.v2(read, r0, rj, rk, write, w0, wj, wk, b.dimI, b.dimJ, b.dimK, prescale);
        }
    }
}
