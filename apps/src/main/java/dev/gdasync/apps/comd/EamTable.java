package dev.gdasync.apps.comd;

/**
 * A tabulated function on an even grid {@code x0 + i / invDx}, interpolated as CoMD does: the table is padded by one
 * value before and two after, and a value and its derivative come from a quadratic through three points.
 */
final class EamTable {
    private final int n;
    private final double x0;
    private final double invDx;
    private final double[] values; // values[i + 1] is point i; values[0] pads point -1, values[n + 1], values[n + 2] pad points n, n + 1

    EamTable(int n, double x0, double dx, double[] data) {
        this.n = n;
        this.x0 = x0;
        this.invDx = 1.0 / dx;
        this.values = new double[n + 4]; // one more than CoMD's: a rank past the table's end reads a zero, not outside the array
        for (int i = 0; i < n; i++) {
            values[i + 1] = data[i];
        }
        values[0] = values[1];
        values[n + 1] = values[n];
        values[n + 2] = values[n];
    }

    /**
     * @param rIn  where
     * @param out  receives the value at index 0 and the derivative at index 1
     */
    void interpolate(double rIn, double[] out) {
        double r = rIn;
        if (r < x0) {
            r = x0;
        }
        r = (r - x0) * invDx;
        int ii = (int) Math.floor(r);
        if (ii > n) {
            ii = n;
            r = n / invDx;
        }
        r = r - Math.floor(r);
        // tt[k] of CoMD is values[k + 1]
        double tm1 = values[ii];
        double t0 = values[ii + 1];
        double t1 = values[ii + 2];
        double t2 = values[ii + 3];
        double g1 = t1 - tm1;
        double g2 = t2 - t0;
        out[0] = t0 + 0.5 * r * (g1 + r * (t1 + tm1 - 2.0 * t0));
        out[1] = 0.5 * (g1 + r * (g2 - g1)) * invDx;
    }
}
