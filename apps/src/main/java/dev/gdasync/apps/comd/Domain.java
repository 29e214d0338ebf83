package dev.gdasync.apps.comd;

/**
 * The spatial decomposition: a grid of {@code procGrid} ranks over the periodic box {@code [0, globalExtent)}, rank
 * {@code r} at grid coordinate {@code (r mod px, (r / px) mod py, r / (px py))}, each owning an equal brick.
 */
final class Domain {
    final int[] procGrid = new int[3];
    final int[] procCoord = new int[3];
    final double[] globalMin = new double[3];
    final double[] globalMax = new double[3];
    final double[] globalExtent = new double[3];
    final double[] localMin = new double[3];
    final double[] localMax = new double[3];
    final double[] localExtent = new double[3];

    /**
     * @param procGrid     ranks along x, y and z
     * @param rank         this rank
     * @param globalExtent the box's size along x, y and z
     */
    Domain(int[] procGrid, int rank, double[] globalExtent) {
        System.arraycopy(procGrid, 0, this.procGrid, 0, 3);
        int r = rank;
        procCoord[0] = r % procGrid[0];
        r /= procGrid[0];
        procCoord[1] = r % procGrid[1];
        procCoord[2] = r / procGrid[1];
        for (int i = 0; i < 3; i++) {
            globalMin[i] = 0;
            globalMax[i] = globalExtent[i];
            this.globalExtent[i] = globalMax[i] - globalMin[i];
        }
        for (int i = 0; i < 3; i++) {
            localExtent[i] = this.globalExtent[i] / procGrid[i];
            localMin[i] = globalMin[i] + procCoord[i] * localExtent[i];
            localMax[i] = globalMin[i] + (procCoord[i] + 1) * localExtent[i];
        }
    }

    /** @return the rank at offset (dx, dy, dz) on the periodic grid */
    int processorNum(int dx, int dy, int dz) {
        int ix = (procCoord[0] + dx + procGrid[0]) % procGrid[0];
        int iy = (procCoord[1] + dy + procGrid[1]) % procGrid[1];
        int iz = (procCoord[2] + dz + procGrid[2]) % procGrid[2];
        return ix + procGrid[0] * (iy + procGrid[1] * iz);
    }
}
