package dev.gdasync.apps.hpgmg;

/**
 * problem.fv.c: the variable coefficient beta = 1 + 1/4 sin(2 pi x) sin(2 pi y) sin(2 pi z) on faces and the
 * right-hand side f = sin^7 product with its 4th-order cell-average corrections. StrictMath makes the
 * values the same on every JVM.
 */
final class Problem {
    private Problem() {
    }

    static double beta(double x, double y, double z, double h, boolean addBxx, boolean addByy, boolean addBzz) {
        double b = 0.25;
        double a = 2.0 * Math.PI;
        double bb = 1.0 + b * StrictMath.sin(a * x) * StrictMath.sin(a * y) * StrictMath.sin(a * z);
        double second = -a * a * b * StrictMath.sin(a * x) * StrictMath.sin(a * y) * StrictMath.sin(a * z);
        if (addBxx) bb += (h * h / 24.0) * second;
        if (addByy) bb += (h * h / 24.0) * second;
        if (addBzz) bb += (h * h / 24.0) * second;
        return bb;
    }

    static double f(double x, double y, double z, double h) {
        double a = 2.0 * Math.PI;
        double p = 7.0;
        double sx = StrictMath.sin(a * x), sy = StrictMath.sin(a * y), sz = StrictMath.sin(a * z);
        double cx = StrictMath.cos(a * x), cy = StrictMath.cos(a * y), cz = StrictMath.cos(a * z);
        double px = StrictMath.pow(sx, p), py = StrictMath.pow(sy, p), pz = StrictMath.pow(sz, p);
        double f = px * py * pz;
        double fxx = -a * a * p * px * py * pz + a * a * p * (p - 1) * StrictMath.pow(sx, p - 2) * py * pz * StrictMath.pow(cx, 2);
        double fyy = -a * a * p * px * py * pz + a * a * p * (p - 1) * px * StrictMath.pow(sy, p - 2) * pz * StrictMath.pow(cy, 2);
        double fzz = -a * a * p * px * py * pz + a * a * p * (p - 1) * px * py * StrictMath.pow(sz, p - 2) * StrictMath.pow(cz, 2);
        f += (h * h / 24.0) * fxx;
        f += (h * h / 24.0) * fyy;
        f += (h * h / 24.0) * fzz;
        return f;
    }

    /** initialize_problem: beta on every face including the high faces, f in every cell (and one high layer). */
    static void initialize(Level l, double h) {
        l.h = h;
        for (Box b : l.boxes) {
            int g = b.ghosts;
            for (int k = 0; k <= b.dim; k++) {
                for (int j = 0; j <= b.dim; j++) {
                    for (int i = 0; i <= b.dim; i++) {
                        int ijk = (i + g) + (j + g) * b.jStride + (k + g) * b.kStride;
                        double x = h * ((double) (i + b.lowI) + 0.5);
                        double y = h * ((double) (j + b.lowJ) + 0.5);
                        double z = h * ((double) (k + b.lowK) + 0.5);
                        b.v[Level.VECTOR_BETA_I][ijk] = beta(x - h * 0.5, y, z, h, false, true, true);
                        b.v[Level.VECTOR_BETA_J][ijk] = beta(x, y - h * 0.5, z, h, true, false, true);
                        b.v[Level.VECTOR_BETA_K][ijk] = beta(x, y, z - h * 0.5, h, true, true, false);
                        b.v[Level.VECTOR_F][ijk] = f(x, y, z, h);
                    }
                }
            }
        }
    }
}
