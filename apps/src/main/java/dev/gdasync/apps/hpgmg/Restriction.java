package dev.gdasync.apps.hpgmg;

/** restriction_pc_block of restriction.c: piecewise-constant restriction of cells and of i/j/k faces. */
final class Restriction {
    static final int CELL = 0;
    static final int FACE_I = 1;
    static final int FACE_J = 2;
    static final int FACE_K = 3;

    private Restriction() {
    }

    static void block(int type, double[] read, int r0, int rj, int rk, double[] write, int w0, int wj, int wk,
                      int dimI, int dimJ, int dimK) {
        for (int k = 0, kk = 0; k < dimK; k++, kk += 2) {
            for (int j = 0, jj = 0; j < dimJ; j++, jj += 2) {
                for (int i = 0, ii = 0; i < dimI; i++, ii += 2) {
                    int w = w0 + i + j * wj + k * wk;
                    int r = r0 + ii + jj * rj + kk * rk;
                    switch (type) {
                        case CELL -> write[w] = (read[r] + read[r + 1]
                                + read[r + rj] + read[r + 1 + rj]
                                + read[r + rk] + read[r + 1 + rk]
                                + read[r + rj + rk] + read[r + 1 + rj + rk]) * 0.125;
                        case FACE_I -> write[w] = (read[r] + read[r + rj] + read[r + rk] + read[r + rj + rk]) * 0.25;
                        case FACE_J -> write[w] = (read[r] + read[r + 1] + read[r + rk] + read[r + 1 + rk]) * 0.25;
                        case FACE_K -> write[w] = (read[r] + read[r + 1] + read[r + rj] + read[r + 1 + rj]) * 0.25;
                        default -> throw new IllegalArgumentException("restriction type " + type);
                    }
                }
            }
        }
    }
}
