package dev.gdasync.apps.comd;

import java.lang.foreign.MemorySegment;

/**
 * The atom exchange of CoMD's redistribution: each face sends two layers of boxes (the atoms that left through it,
 * which {@link Atoms#updateLinkCells} put in the halo layer, and the boundary layer the neighbor needs as its halo),
 * with positions shifted by the box size across the periodic boundary. Axis by axis, so y and z also carry the halo
 * boxes x (and y) filled: edges and corners arrive in three steps. The receiver puts every atom in the box its
 * position says, local or halo.
 */
final class AtomHalo extends Halo {
    /** gid, species, then position and momentum: CoMD's AtomMsg. */
    static final int RECORD = 8 + 6 * 8;

    private final LinkCells boxes;
    private final Atoms atoms;
    private final int[][] cellList = new int[6][];
    private final double[][] shift = new double[6][3];

    AtomHalo(Domain domain, LinkCells boxes, Atoms atoms) {
        super(domain);
        this.boxes = boxes;
        this.atoms = atoms;
        for (int face = 0; face < 6; face++) {
            cellList[face] = cellList(face);
        }
        double[][] pbc = new double[6][3];
        int[] c = domain.procCoord;
        int[] g = domain.procGrid;
        for (int axis = 0; axis < 3; axis++) {
            if (c[axis] == 0) {
                pbc[2 * axis][axis] = +1.0;
            }
            if (c[axis] == g[axis] - 1) {
                pbc[2 * axis + 1][axis] = -1.0;
            }
        }
        for (int face = 0; face < 6; face++) {
            for (int axis = 0; axis < 3; axis++) {
                shift[face][axis] = pbc[face][axis] * domain.globalExtent[axis];
            }
        }
    }

    private int[] cellList(int face) {
        int[] g = boxes.gridSize;
        int xBegin = -1;
        int xEnd = g[0] + 1;
        int yBegin = -1;
        int yEnd = g[1] + 1;
        int zBegin = -1;
        int zEnd = g[2] + 1;
        switch (face) {
            case 0 -> xEnd = xBegin + 2;
            case 1 -> xBegin = xEnd - 2;
            case 2 -> yEnd = yBegin + 2;
            case 3 -> yBegin = yEnd - 2;
            case 4 -> zEnd = zBegin + 2;
            default -> zBegin = zEnd - 2;
        }
        int[] list = new int[(xEnd - xBegin) * (yEnd - yBegin) * (zEnd - zBegin)];
        int n = 0;
        for (int ix = xBegin; ix < xEnd; ix++) {
            for (int iy = yBegin; iy < yEnd; iy++) {
                for (int iz = zBegin; iz < zEnd; iz++) {
                    list[n++] = boxes.boxFromTuple(ix, iy, iz);
                }
            }
        }
        return list;
    }

    @Override
    String name() {
        return "atoms";
    }

    @Override
    int recordBytes() {
        return RECORD;
    }

    @Override
    int maxRecords(int face) {
        return cellList[face].length * LinkCells.MAXATOMS;
    }

    @Override
    int loadRecords(int face, MemorySegment buf, long offset) {
        double sx = shift[face][0];
        double sy = shift[face][1];
        double sz = shift[face][2];
        int n = 0;
        long o = offset;
        for (int box : cellList[face]) {
            int begin = box * LinkCells.MAXATOMS;
            int end = begin + boxes.nAtoms[box];
            for (int i = begin; i < end; i++) {
                buf.set(INT, o, atoms.gid[i]);
                buf.set(INT, o + 4, atoms.species[i]);
                buf.set(DOUBLE, o + 8, atoms.r[3 * i] + sx);
                buf.set(DOUBLE, o + 16, atoms.r[3 * i + 1] + sy);
                buf.set(DOUBLE, o + 24, atoms.r[3 * i + 2] + sz);
                buf.set(DOUBLE, o + 32, atoms.p[3 * i]);
                buf.set(DOUBLE, o + 40, atoms.p[3 * i + 1]);
                buf.set(DOUBLE, o + 48, atoms.p[3 * i + 2]);
                o += RECORD;
                n++;
            }
        }
        return n;
    }

    @Override
    void unloadRecords(int face, MemorySegment buf, long offset, int count) {
        long o = offset;
        for (int k = 0; k < count; k++, o += RECORD) {
            atoms.putAtomInBox(buf.get(INT, o), buf.get(INT, o + 4),
                    buf.get(DOUBLE, o + 8), buf.get(DOUBLE, o + 16), buf.get(DOUBLE, o + 24),
                    buf.get(DOUBLE, o + 32), buf.get(DOUBLE, o + 40), buf.get(DOUBLE, o + 48));
        }
    }
}
