package dev.gdasync.apps.hpgmg;

/**
 * One cubic box of cells owned by this rank, with {@code ghosts} ghost layers on every side and one array
 * per vector. Cell (i, j, k), i in [-ghosts, dim + ghosts), lies at {@code base + i + j*jStride + k*kStride}.
 */
final class Box {
    final int globalId;
    final int lowI;
    final int lowJ;
    final int lowK;
    final int dim;
    final int ghosts;
    final int jStride;
    final int kStride;
    final int volume;
    final int base;
    final double[][] v;

    Box(int globalId, int lowI, int lowJ, int lowK, int dim, int ghosts, int vectors) {
        this.globalId = globalId;
        this.lowI = lowI;
        this.lowJ = lowJ;
        this.lowK = lowK;
        this.dim = dim;
        this.ghosts = ghosts;
        this.jStride = dim + 2 * ghosts;
        this.kStride = jStride * (dim + 2 * ghosts);
        this.volume = kStride * (dim + 2 * ghosts);
        this.base = ghosts * (1 + jStride + kStride);
        this.v = new double[vectors][volume];
    }
}
