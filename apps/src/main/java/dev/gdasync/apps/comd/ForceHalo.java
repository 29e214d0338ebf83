package dev.gdasync.apps.comd;

import java.lang.foreign.MemorySegment;

/**
 * EAM's exchange of {@code dfEmbed}: each face sends the value of every atom of its boundary layer, and the
 * receiver writes them into the matching halo layer, atom for atom (both sides hold those atoms in the same order:
 * the atom exchange put them there, sorted by id). y and z include the x (and y) halo boxes.
 */
final class ForceHalo extends Halo {
    private final LinkCells boxes;
    private final double[] dfEmbed;
    private final int[][] sendCells = new int[6][];
    private final int[][] recvCells = new int[6][];

    ForceHalo(Domain domain, LinkCells boxes, double[] dfEmbed) {
        super(domain);
        this.boxes = boxes;
        this.dfEmbed = dfEmbed;
        for (int face = 0; face < 6; face++) {
            sendCells[face] = cells(face, true);
            recvCells[face] = cells(face, false);
        }
    }

    private int[] cells(int face, boolean send) {
        int nx = boxes.gridSize[0];
        int ny = boxes.gridSize[1];
        int nz = boxes.gridSize[2];
        int[] b; // xBegin, xEnd, yBegin, yEnd, zBegin, zEnd
        if (send) {
            b = switch (face) {
                case 0 -> new int[]{0, 1, 0, ny, 0, nz};
                case 1 -> new int[]{nx - 1, nx, 0, ny, 0, nz};
                case 2 -> new int[]{-1, nx + 1, 0, 1, 0, nz};
                case 3 -> new int[]{-1, nx + 1, ny - 1, ny, 0, nz};
                case 4 -> new int[]{-1, nx + 1, -1, ny + 1, 0, 1};
                default -> new int[]{-1, nx + 1, -1, ny + 1, nz - 1, nz};
            };
        } else {
            b = switch (face) {
                case 0 -> new int[]{-1, 0, 0, ny, 0, nz};
                case 1 -> new int[]{nx, nx + 1, 0, ny, 0, nz};
                case 2 -> new int[]{-1, nx + 1, -1, 0, 0, nz};
                case 3 -> new int[]{-1, nx + 1, ny, ny + 1, 0, nz};
                case 4 -> new int[]{-1, nx + 1, -1, ny + 1, -1, 0};
                default -> new int[]{-1, nx + 1, -1, ny + 1, nz, nz + 1};
            };
        }
        int[] list = new int[(b[1] - b[0]) * (b[3] - b[2]) * (b[5] - b[4])];
        int n = 0;
        for (int ix = b[0]; ix < b[1]; ix++) {
            for (int iy = b[2]; iy < b[3]; iy++) {
                for (int iz = b[4]; iz < b[5]; iz++) {
                    list[n++] = boxes.boxFromTuple(ix, iy, iz);
                }
            }
        }
        return list;
    }

    @Override
    String name() {
        return "dfEmbed";
    }

    @Override
    int recordBytes() {
        return 8;
    }

    @Override
    int maxRecords(int face) {
        return sendCells[face].length * LinkCells.MAXATOMS;
    }

    @Override
    int loadRecords(int face, MemorySegment buf, long offset) {
        int n = 0;
        long o = offset;
        for (int box : sendCells[face]) {
            int begin = box * LinkCells.MAXATOMS;
            int end = begin + boxes.nAtoms[box];
            for (int i = begin; i < end; i++, o += 8) {
                buf.set(DOUBLE, o, dfEmbed[i]);
                n++;
            }
        }
        return n;
    }

    @Override
    void unloadRecords(int face, MemorySegment buf, long offset, int count) {
        long o = offset;
        int k = 0;
        for (int box : recvCells[face]) {
            int begin = box * LinkCells.MAXATOMS;
            int end = begin + boxes.nAtoms[box];
            for (int i = begin; i < end; i++, o += 8, k++) {
                if (k >= count) {
                    throw new IllegalStateException("a dfEmbed message across face " + face + " holds " + count
                            + " values; the halo layer it fills holds more atoms");
                }
                dfEmbed[i] = buf.get(DOUBLE, o);
            }
        }
        if (k != count) {
            throw new IllegalStateException("a dfEmbed message across face " + face + " holds " + count + " values for "
                    + k + " halo atoms");
        }
    }
}
