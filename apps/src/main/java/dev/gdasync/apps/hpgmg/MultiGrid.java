package dev.gdasync.apps.hpgmg;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * mg.c and solvers: the level hierarchy upstream's MGBuild makes (halve boxes down to 8^3, agglomerate 8:1,
 * gather onto fewer ranks, then all onto one), the F-cycle (FMGSolve), the V-cycle, GSRB smoothing and the
 * BiCGStab bottom solver. Every inter-rank step goes through the {@link Transport}; compute through it too
 * (so the sa model queues it on its stream).
 */
final class MultiGrid {
    static final int AGGLOMERATION_START = 8;
    static final int RADIUS = 2;
    static final int NUM_SMOOTHS = 3;
    static final double BOTTOM_NORM = 1e-3;
    static final int BICGSTAB_VECTORS = 8;

    final List<Level> levels = new ArrayList<>();
    final Transport t;
    final Operators ops;
    final PrintStream out;
    final double a = 0.0;
    final double b = 1.0;
    int solvesPerformed;
    double solveTime;
    double buildTime;

    MultiGrid(Transport t, Operators ops, PrintStream out) {
        this.t = t;
        this.ops = ops;
        this.out = out;
    }

    private void say(String s) {
        if (out != null) {
            out.print(s);
        }
    }

    private Level createLevel(int index, int boxesIn, int boxDim, int vectors, int nProcs) {
        int total = boxesIn * boxesIn * boxesIn;
        say(String.format(Locale.ROOT, "\nattempting to create a %d^3 level from %d x %d^3 boxes distributed among %d tasks...%n",
                boxesIn * boxDim, total, boxDim, nProcs));
        say("  boundary condition = BC_DIRICHLET\n");
        say("  Decomposing level via Z-mort ordering... done\n");
        say("  Allocating vectors... done\n");
        Level l = new Level(index, boxesIn, boxDim, RADIUS, vectors, t.rank(), nProcs);
        int max = 0;
        for (int r = 0; r < nProcs; r++) {
            max = Math.max(max, l.boxesOf(r));
        }
        say(String.format(Locale.ROOT, "  Calculating boxes per process... target=%.3f, max=%d%n", (double) total / nProcs, max));
        return l;
    }

    /** Creates the fine level, the problem on it, and the hierarchy (upstream's main and MGBuild). */
    void build(int boxesIn, int boxDim) {
        double start = LevelTimers.now();
        int nProcs = t.size();
        Level fine = createLevel(0, boxesIn, boxDim, Level.VECTORS_RESERVED, nProcs);
        say(String.format(Locale.ROOT, "  Creating Poisson (a=%f, b=%f) test problem%n", a, b));
        double h = 1.0 / ((double) boxesIn * (double) boxDim);
        Problem.initialize(fine, h);
        levels.add(fine);
        int coarseDim = fine.dim;
        int maxLevels = 1;
        while (coarseDim >= 2 && (coarseDim & 1) == 0) {
            maxLevels++;
            coarseDim /= 2;
        }
        List<int[]> shapes = new ArrayList<>(); // nProcs, dim, boxDim, boxesIn
        int[] prev = {nProcs, fine.dim, boxDim, boxesIn};
        boolean restrict = maxLevels >= 2;
        while (restrict) {
            restrict = false;
            int fBox = prev[2], fProcs = prev[0], fDim = prev[1], fIn = prev[3];
            int[] next = null;
            if (fBox % 2 == 0 && fBox > AGGLOMERATION_START && fBox / 2 >= RADIUS) {
                next = new int[]{fProcs, fDim / 2, fBox / 2, fIn};
            } else if (fIn % 2 == 0 && fBox >= RADIUS) {
                next = new int[]{fProcs, fDim / 2, fBox, fIn / 2};
            } else if (coarseDim != 1 && fDim == 2 * coarseDim && fDim / 2 >= RADIUS) {
                next = new int[]{1, fDim / 2, fDim / 2, 1};
            } else if (coarseDim != 1 && fDim == 4 * coarseDim && fBox / 2 >= RADIUS) {
                next = new int[]{Math.min(coarseDim, fProcs), fDim / 2, fBox / 2, fIn};
            } else if (coarseDim != 1 && fDim == 8 * coarseDim && fBox / 2 >= RADIUS) {
                next = new int[]{Math.min(coarseDim * coarseDim, fProcs), fDim / 2, fBox / 2, fIn};
            } else if (fBox % 2 == 0 && fBox / 2 >= RADIUS) {
                next = new int[]{fProcs, fDim / 2, fBox / 2, fIn};
            }
            if (next != null && next[1] >= 1) {
                shapes.add(next);
                prev = next;
                restrict = true;
            }
        }
        for (int i = 0; i < shapes.size(); i++) {
            int[] s = shapes.get(i);
            int vectors = Level.VECTORS_RESERVED + (i == shapes.size() - 1 ? BICGSTAB_VECTORS : 0);
            Level l = createLevel(i + 1, s[3], s[2], vectors, s[0]);
            l.h = 2.0 * levels.get(i).h;
            levels.add(l);
        }
        if (shapes.isEmpty()) {
            // the fine level is the bottom: BiCGStab needs its vectors
            throw new IllegalArgumentException("the grid cannot be coarsened: no multigrid hierarchy");
        }
        say("\n  Building restriction and interpolation lists... ");
        for (int i = 0; i + 1 < levels.size(); i++) {
            Level f = levels.get(i), c = levels.get(i + 1);
            for (int type = 0; type < 4; type++) {
                f.restriction[type] = restrictionPlan(f, c, type);
            }
            f.interpolation = interpolationPlan(f, c);
        }
        say("done\n");
        for (int i = 0; i < levels.size(); i++) {
            Level l = levels.get(i);
            List<Integer> part = new ArrayList<>();
            for (int r = 0; r < t.size(); r++) {
                boolean act = false;
                for (int j = i; j < levels.size(); j++) {
                    act |= levels.get(j).boxesOf(r) > 0;
                }
                if (act) {
                    part.add(r);
                }
            }
            l.participants = part.stream().mapToInt(Integer::intValue).toArray();
            l.active = part.contains(t.rank());
            l.reduction = new Reduction(l, ops);
        }
        rebuildOperator(fine, null);
        say("\n");
        for (int i = 1; i < levels.size(); i++) {
            rebuildOperator(levels.get(i), levels.get(i - 1));
        }
        say("\n");
        t.sync();
        buildTime = LevelTimers.now() - start;
    }

    private static int lo(int a, int b) {
        return Math.max(a, b);
    }

    private CommPlan restrictionPlan(Level f, Level c, int type) {
        CommPlan.Builder pb = new CommPlan.Builder("restriction " + type + " level " + f.index);
        int me = t.rank();
        for (int cb = 0; cb < c.rankOfBox.length; cb++) {
            for (int fb = 0; fb < f.rankOfBox.length; fb++) {
                int fo = f.rankOfBox[fb], co = c.rankOfBox[cb];
                if (fo != me && co != me) {
                    continue;
                }
                int[] ov = overlap(f, fb, c, cb);
                if (ov == null) {
                    continue;
                }
                // Face restrictions include the high face of the fine box's region (upstream's 1 + box_dim/2).
                int ni = ov[3] + (type == Restriction.FACE_I ? 1 : 0);
                int nj = ov[4] + (type == Restriction.FACE_J ? 1 : 0);
                int nk = ov[5] + (type == Restriction.FACE_K ? 1 : 0);
                int[] fl = low(f, fb), cl = low(c, cb);
                int ri = 2 * ov[0] - fl[0], rj = 2 * ov[1] - fl[1], rk = 2 * ov[2] - fl[2];
                int wi = ov[0] - cl[0], wj = ov[1] - cl[1], wk = ov[2] - cl[2];
                int fLocal = f.localOfBox[fb], cLocal = c.localOfBox[cb];
                if (fo == me && co == me) {
                    pb.local(new Block(ni, nj, nk, fLocal, null, ri, rj, rk, cLocal, null, wi, wj, wk));
                } else if (fo == me) {
                    pb.send(co, ni * nj * nk, (buf, off) -> new Block(ni, nj, nk, fLocal, null, ri, rj, rk, -1, buf, off, 0, 0));
                } else {
                    pb.recv(fo, ni * nj * nk, (buf, off) -> new Block(ni, nj, nk, -1, buf, off, 0, 0, cLocal, null, wi, wj, wk));
                }
            }
        }
        return pb.build();
    }

    private CommPlan interpolationPlan(Level f, Level c) {
        CommPlan.Builder pb = new CommPlan.Builder("interpolation level " + f.index);
        int me = t.rank();
        for (int fb = 0; fb < f.rankOfBox.length; fb++) {
            for (int cb = 0; cb < c.rankOfBox.length; cb++) {
                int fo = f.rankOfBox[fb], co = c.rankOfBox[cb];
                if (fo != me && co != me) {
                    continue;
                }
                int[] ov = overlap(f, fb, c, cb);
                if (ov == null) {
                    continue;
                }
                int ni = ov[3], nj = ov[4], nk = ov[5];
                int[] fl = low(f, fb), cl = low(c, cb);
                int ri = ov[0] - cl[0], rj = ov[1] - cl[1], rk = ov[2] - cl[2];
                int wi = 2 * ov[0] - fl[0], wj = 2 * ov[1] - fl[1], wk = 2 * ov[2] - fl[2];
                int fLocal = f.localOfBox[fb], cLocal = c.localOfBox[cb];
                if (fo == me && co == me) {
                    pb.local(new Block(ni, nj, nk, cLocal, null, ri, rj, rk, fLocal, null, wi, wj, wk));
                } else if (co == me) {
                    pb.send(fo, 8 * ni * nj * nk, (buf, off) -> new Block(ni, nj, nk, cLocal, null, ri, rj, rk, -1, buf, off, 0, 0));
                } else {
                    pb.recv(co, 8 * ni * nj * nk,
                            (buf, off) -> new Block(2 * ni, 2 * nj, 2 * nk, -1, buf, off, 0, 0, fLocal, null, wi, wj, wk));
                }
            }
        }
        return pb.build();
    }

    private static int[] low(Level l, int box) {
        int n = l.boxesIn;
        return new int[]{(box % n) * l.boxDim, ((box / n) % n) * l.boxDim, (box / (n * n)) * l.boxDim};
    }

    /** @return the coarse cells a fine box and a coarse box share: start i, j, k and sizes, or null */
    private static int[] overlap(Level f, int fb, Level c, int cb) {
        int[] fl = low(f, fb), cl = low(c, cb);
        int[] r = new int[6];
        for (int d = 0; d < 3; d++) {
            int s = lo(cl[d], fl[d] / 2);
            int e = Math.min(cl[d] + c.boxDim, (fl[d] + f.boxDim) / 2);
            if (e <= s) {
                return null;
            }
            r[d] = s;
            r[3 + d] = e - s;
        }
        return r;
    }

    // ---- operators with their communication ----

    void exchange(Level l, int id, Shape shape) {
        double start = LevelTimers.now();
        CommPlan p = l.exchange[shape.ordinal()];
        Transport.Kernel copy = blk -> ops.copy(l, id, blk);
        t.run(p, copy, copy, copy);
        l.timers.ghostZoneTotal += LevelTimers.now() - start;
    }

    void bcs(Level l, int id, Shape shape, int order) {
        double start = LevelTimers.now();
        t.compute(() -> ops.applyBcs(l, id, shape, order));
        l.timers.boundaryConditions += LevelTimers.now() - start;
    }

    void restriction(Level c, int idc, Level f, int idf, int type) {
        double start = LevelTimers.now();
        Transport.Kernel r = blk -> ops.restrict(c, idc, f, idf, type, blk);
        t.run(f.restriction[type], r, r, blk -> ops.copy(c, idc, blk));
        f.timers.restrictionTotal += LevelTimers.now() - start;
    }

    void interpolation(Level f, int idf, double prescale, Level c, int idc, int order) {
        exchange(c, idc, Shape.BOX);
        bcs(c, idc, Shape.BOX, order);
        double start = LevelTimers.now();
        t.run(f.interpolation, blk -> ops.interpolate(f, idf, 0.0, c, idc, blk, order),
                blk -> ops.interpolate(f, idf, prescale, c, idc, blk, order),
                blk -> ops.increment(f, idf, prescale, blk));
        f.timers.interpolationTotal += LevelTimers.now() - start;
    }

    void rebuildOperator(Level l, Level from) {
        if (from != null) {
            restriction(l, Level.VECTOR_BETA_I, from, Level.VECTOR_BETA_I, Restriction.FACE_I);
            restriction(l, Level.VECTOR_BETA_J, from, Level.VECTOR_BETA_J, Restriction.FACE_J);
            restriction(l, Level.VECTOR_BETA_K, from, Level.VECTOR_BETA_K, Restriction.FACE_K);
        }
        t.compute(() -> ops.extrapolateBetas(l));
        exchange(l, Level.VECTOR_BETA_I, Shape.BOX);
        exchange(l, Level.VECTOR_BETA_J, Shape.BOX);
        exchange(l, Level.VECTOR_BETA_K, Shape.BOX);
        int colors = Math.min(4, l.dim);
        say(String.format(Locale.ROOT, "  calculating D^{-1} exactly for level h=%e using %3d colors...  ", l.h, colors * colors * colors));
        t.compute(() -> {
            ops.zero(l, Level.VECTOR_DINV);
            ops.zero(l, Level.VECTOR_E);
        });
        for (int kc = 0; kc < colors; kc++) {
            for (int jc = 0; jc < colors; jc++) {
                for (int ic = 0; ic < colors; ic++) {
                    int i = ic, j = jc, k = kc;
                    t.compute(() -> ops.color(l, Level.VECTOR_TEMP, colors, i, j, k));
                    exchange(l, Level.VECTOR_TEMP, Shape.NO_CORNERS);
                    bcs(l, Level.VECTOR_TEMP, Shape.NO_CORNERS, 4);
                    t.compute(() -> ops.diagonalAccumulate(l, Level.VECTOR_TEMP, a, b));
                }
            }
        }
        t.compute(() -> ops.diagonalInvert(l, a, b));
        say("done\n");
        exchange(l, Level.VECTOR_DINV, Shape.BOX);
    }

    void smooth(Level l, int x, int rhs) {
        for (int s = 0; s < 2 * NUM_SMOOTHS; s++) {
            int src = (s & 1) == 0 ? x : Level.VECTOR_TEMP;
            int dst = (s & 1) == 0 ? Level.VECTOR_TEMP : x;
            exchange(l, src, Shape.NO_CORNERS);
            bcs(l, src, Shape.NO_CORNERS, 4);
            double start = LevelTimers.now();
            int sweep = s;
            t.compute(() -> ops.gsrbSweep(l, src, dst, rhs, sweep, a, b));
            l.timers.smooth += LevelTimers.now() - start;
        }
    }

    void residual(Level l, int res, int x, int rhs) {
        exchange(l, x, Shape.NO_CORNERS);
        bcs(l, x, Shape.NO_CORNERS, 4);
        double start = LevelTimers.now();
        t.compute(() -> ops.residual(l, res, x, rhs, a, b));
        l.timers.residual += LevelTimers.now() - start;
    }

    void applyOp(Level l, int ax, int x) {
        exchange(l, x, Shape.NO_CORNERS);
        bcs(l, x, Shape.NO_CORNERS, 4);
        double start = LevelTimers.now();
        t.compute(() -> ops.applyOp(l, ax, x, a, b));
        l.timers.applyOp += LevelTimers.now() - start;
    }

    private void blas1(Level l, Runnable r) {
        double start = LevelTimers.now();
        t.compute(r);
        l.timers.blas1 += LevelTimers.now() - start;
    }

    double norm(Level l, int id) {
        double start = LevelTimers.now();
        double n = l.reduction.norm(t, id);
        l.timers.blas1 += LevelTimers.now() - start;
        return n;
    }

    double dot(Level l, int x, int y) {
        double start = LevelTimers.now();
        double d = l.reduction.dot(t, x, y);
        l.timers.blas1 += LevelTimers.now() - start;
        return d;
    }

    void vcycle(int e, int r, int level) {
        Level l = levels.get(level);
        if (!l.active) {
            return;
        }
        if (level == levels.size() - 1) {
            double start = LevelTimers.now();
            bicgstab(l, e, r, BOTTOM_NORM);
            l.timers.total += LevelTimers.now() - start;
            return;
        }
        Level c = levels.get(level + 1);
        double start = LevelTimers.now();
        smooth(l, e, r);
        residual(l, Level.VECTOR_TEMP, e, r);
        restriction(c, r, l, Level.VECTOR_TEMP, Restriction.CELL);
        t.compute(() -> ops.zero(c, e));
        l.timers.total += LevelTimers.now() - start;
        vcycle(e, r, level + 1);
        start = LevelTimers.now();
        interpolation(l, e, 1.0, c, e, 2);
        smooth(l, e, r);
        l.timers.total += LevelTimers.now() - start;
    }

    /** FMGSolve: one F-cycle; returns the max norm of the residual and prints upstream's line. */
    double[] fmgSolve(int onLevel, int u, int f) {
        solvesPerformed++;
        Level top = levels.get(onLevel);
        if (!top.active) {
            return new double[]{0, 0};
        }
        int e = u, r = Level.VECTOR_R;
        double start = LevelTimers.now();
        double normF = norm(top, f);
        blas1(top, () -> ops.scale(top, r, 1.0, f));
        top.timers.total += LevelTimers.now() - start;
        for (int level = onLevel; level < levels.size() - 1; level++) {
            double s = LevelTimers.now();
            restriction(levels.get(level + 1), r, levels.get(level), r, Restriction.CELL);
            levels.get(level).timers.total += LevelTimers.now() - s;
        }
        Level bottom = levels.getLast();
        if (bottom.active) {
            double s = LevelTimers.now();
            if (levels.size() - 1 > onLevel) {
                t.compute(() -> ops.zero(bottom, e));
            }
            bicgstab(bottom, e, r, BOTTOM_NORM);
            bottom.timers.total += LevelTimers.now() - s;
        }
        for (int level = levels.size() - 2; level >= onLevel; level--) {
            Level l = levels.get(level);
            double s = LevelTimers.now();
            interpolation(l, e, 0.0, levels.get(level + 1), e, 4);
            l.timers.total += LevelTimers.now() - s;
            l.vcycles++;
            vcycle(e, r, level);
        }
        double s = LevelTimers.now();
        residual(top, Level.VECTOR_TEMP, e, f);
        double normR = norm(top, Level.VECTOR_TEMP);
        top.timers.total += LevelTimers.now() - s;
        solveTime += LevelTimers.now() - start;
        return new double[]{normR, normR / normF};
    }

    void bicgstab(Level l, int x, int rId, double reduction) {
        int r0 = Level.VECTORS_RESERVED, rr = r0 + 1, p = r0 + 2, q = r0 + 3, s = r0 + 4, tt = r0 + 5, ap = r0 + 6, as = r0 + 7;
        int jMax = 200, j = 0;
        boolean failed = false, converged = false;
        residual(l, r0, x, rId);
        blas1(l, () -> ops.scale(l, rr, 1.0, r0));
        blas1(l, () -> ops.scale(l, p, 1.0, r0));
        double rDotR0 = dot(l, rr, r0);
        double normR0 = norm(l, rr);
        if (rDotR0 == 0.0 || normR0 == 0.0) {
            converged = true;
        }
        while (j < jMax && !failed && !converged) {
            j++;
            l.krylovIterations++;
            blas1(l, () -> ops.mul(l, q, 1.0, Level.VECTOR_DINV, p));
            applyOp(l, ap, q);
            double apDotR0 = dot(l, ap, r0);
            if (apDotR0 == 0.0) {
                break;
            }
            double alpha = rDotR0 / apDotR0;
            if (Double.isInfinite(alpha)) {
                break;
            }
            blas1(l, () -> ops.add(l, x, 1.0, x, alpha, q));
            blas1(l, () -> ops.add(l, s, 1.0, rr, -alpha, ap));
            double normS = norm(l, s);
            if (normS == 0.0 || normS < reduction * normR0) {
                converged = true;
                break;
            }
            blas1(l, () -> ops.mul(l, tt, 1.0, Level.VECTOR_DINV, s));
            applyOp(l, as, tt);
            double asDotAs = dot(l, as, as);
            double asDotS = dot(l, as, s);
            if (asDotAs == 0.0) {
                converged = true;
                break;
            }
            double omega = asDotS / asDotAs;
            if (omega == 0.0 || Double.isInfinite(omega)) {
                break;
            }
            blas1(l, () -> ops.add(l, x, 1.0, x, omega, tt));
            blas1(l, () -> ops.add(l, rr, 1.0, s, -omega, as));
            double normR = norm(l, rr);
            if (normR == 0.0 || normR < reduction * normR0) {
                converged = true;
                break;
            }
            double rDotR0New = dot(l, rr, r0);
            if (rDotR0New == 0.0) {
                break;
            }
            double beta = (rDotR0New / rDotR0) * (alpha / omega);
            if (Double.isInfinite(beta)) {
                break;
            }
            blas1(l, () -> ops.add(l, Level.VECTOR_TEMP, 1.0, p, -omega, ap));
            blas1(l, () -> ops.add(l, p, 1.0, rr, beta, Level.VECTOR_TEMP));
            rDotR0 = rDotR0New;
        }
    }

    void resetTimers() {
        for (Level l : levels) {
            l.timers.reset();
            l.krylovIterations = 0;
            l.vcycles = 0;
        }
        solvesPerformed = 0;
        solveTime = 0;
    }
}
