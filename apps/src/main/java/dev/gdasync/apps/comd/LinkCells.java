package dev.gdasync.apps.comd;

/**
 * The link cells of one rank: a grid of local boxes at least a cutoff wide, with one layer of halo boxes around
 * it, numbered as CoMD numbers them (local boxes first, x fastest; then the halo faces x-, x+, y-, y+, z-, z+).
 * Each box holds at most {@link #MAXATOMS} atoms, stored at {@code box * MAXATOMS} in {@link Atoms}.
 */
final class LinkCells {
    /** Atoms a box can hold. */
    static final int MAXATOMS = 64;

    final int[] gridSize = new int[3];
    final int nLocalBoxes;
    final int nHaloBoxes;
    final int nTotalBoxes;
    final double[] localMin = new double[3];
    final double[] localMax = new double[3];
    final double[] boxSize = new double[3];
    final double[] invBoxSize = new double[3];
    final int[] nAtoms;

    LinkCells(Domain domain, double cutoff) {
        for (int i = 0; i < 3; i++) {
            localMin[i] = domain.localMin[i];
            localMax[i] = domain.localMax[i];
            gridSize[i] = (int) (domain.localExtent[i] / cutoff);
            boxSize[i] = domain.localExtent[i] / ((double) gridSize[i]);
            invBoxSize[i] = 1.0 / boxSize[i];
        }
        nLocalBoxes = gridSize[0] * gridSize[1] * gridSize[2];
        nHaloBoxes = 2 * ((gridSize[0] + 2) * (gridSize[1] + gridSize[2] + 2) + (gridSize[1] * gridSize[2]));
        nTotalBoxes = nLocalBoxes + nHaloBoxes;
        nAtoms = new int[nTotalBoxes];
        if (gridSize[0] < 2 || gridSize[1] < 2 || gridSize[2] < 2) {
            throw new IllegalStateException("a rank needs at least 2 link cells along each axis, got " + gridSize[0] + " x "
                    + gridSize[1] + " x " + gridSize[2]);
        }
    }

    /** @return the box at grid coordinate (ix, iy, iz), -1 and gridSize being halo layers */
    int boxFromTuple(int ix, int iy, int iz) {
        int gx = gridSize[0];
        int gy = gridSize[1];
        int gz = gridSize[2];
        int box;
        if (iz == gz) {
            box = nLocalBoxes + 2 * gz * gy + 2 * gz * (gx + 2) + (gx + 2) * (gy + 2) + (gx + 2) * (iy + 1) + (ix + 1);
        } else if (iz == -1) {
            box = nLocalBoxes + 2 * gz * gy + 2 * gz * (gx + 2) + (gx + 2) * (iy + 1) + (ix + 1);
        } else if (iy == gy) {
            box = nLocalBoxes + 2 * gz * gy + gz * (gx + 2) + (gx + 2) * iz + (ix + 1);
        } else if (iy == -1) {
            box = nLocalBoxes + 2 * gz * gy + iz * (gx + 2) + (ix + 1);
        } else if (ix == gx) {
            box = nLocalBoxes + gy * gz + iz * gy + iy;
        } else if (ix == -1) {
            box = nLocalBoxes + iz * gy + iy;
        } else {
            box = ix + gx * iy + gx * gy * iz;
        }
        if (box < 0 || box >= nTotalBoxes) {
            throw new IllegalStateException("no link cell at (" + ix + ", " + iy + ", " + iz + ")");
        }
        return box;
    }

    /** Writes the grid coordinate of {@code box} into {@code t}. */
    void tuple(int box, int[] t) {
        int gx = gridSize[0];
        int gy = gridSize[1];
        int gz = gridSize[2];
        int ix;
        int iy;
        int iz;
        if (box < nLocalBoxes) {
            ix = box % gx;
            box /= gx;
            iy = box % gy;
            iz = box / gy;
        } else {
            int ink = box - nLocalBoxes;
            if (ink < 2 * gy * gz) {
                if (ink < gy * gz) {
                    ix = 0;
                } else {
                    ink -= gy * gz;
                    ix = gx + 1;
                }
                iy = 1 + ink % gy;
                iz = 1 + ink / gy;
            } else if (ink < 2 * gz * (gy + gx + 2)) {
                ink -= 2 * gz * gy;
                if (ink < (gx + 2) * gz) {
                    iy = 0;
                } else {
                    ink -= (gx + 2) * gz;
                    iy = gy + 1;
                }
                ix = ink % (gx + 2);
                iz = 1 + ink / (gx + 2);
            } else {
                ink -= 2 * gz * (gy + gx + 2);
                if (ink < (gx + 2) * (gy + 2)) {
                    iz = 0;
                } else {
                    ink -= (gx + 2) * (gy + 2);
                    iz = gz + 1;
                }
                ix = ink % (gx + 2);
                iy = ink / (gx + 2);
            }
            ix--;
            iy--;
            iz--;
        }
        t[0] = ix;
        t[1] = iy;
        t[2] = iz;
    }

    /**
     * @param box a local box
     * @param out receives the 27 boxes around it (itself included), x slowest, z fastest
     */
    void neighborBoxes(int box, int[] out) {
        int[] t = new int[3];
        tuple(box, t);
        int n = 0;
        for (int i = t[0] - 1; i <= t[0] + 1; i++) {
            for (int j = t[1] - 1; j <= t[1] + 1; j++) {
                for (int k = t[2] - 1; k <= t[2] + 1; k++) {
                    out[n++] = boxFromTuple(i, j, k);
                }
            }
        }
    }

    /** @return the box a position belongs to: a local box when it lies inside this rank's brick, else a halo box */
    int boxFromCoord(double x, double y, double z) {
        int ix = (int) Math.floor((x - localMin[0]) * invBoxSize[0]);
        int iy = (int) Math.floor((y - localMin[1]) * invBoxSize[1]);
        int iz = (int) Math.floor((z - localMin[2]) * invBoxSize[2]);
        if (x < localMax[0]) {
            if (ix == gridSize[0]) {
                ix = gridSize[0] - 1;
            }
        } else {
            ix = gridSize[0];
        }
        if (y < localMax[1]) {
            if (iy == gridSize[1]) {
                iy = gridSize[1] - 1;
            }
        } else {
            iy = gridSize[1];
        }
        if (z < localMax[2]) {
            if (iz == gridSize[2]) {
                iz = gridSize[2] - 1;
            }
        } else {
            iz = gridSize[2];
        }
        return boxFromTuple(ix, iy, iz);
    }

    /** Empties every halo box. */
    void emptyHaloCells() {
        for (int i = nLocalBoxes; i < nTotalBoxes; i++) {
            nAtoms[i] = 0;
        }
    }
}
