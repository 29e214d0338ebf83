package dev.gdasync.apps.comd;

/**
 * The atoms of one rank, stored by link cell: the atom {@code i} of box {@code b} is at index
 * {@code b * MAXATOMS + i}. Positions, momenta and forces are interleaved x, y, z ({@code 3 * index + axis}).
 */
final class Atoms {
    final int[] gid;
    final int[] species;
    final double[] r;
    final double[] p;
    final double[] f;
    final double[] u;
    private final LinkCells boxes;

    Atoms(LinkCells boxes) {
        this.boxes = boxes;
        int max = LinkCells.MAXATOMS * boxes.nTotalBoxes;
        gid = new int[max];
        species = new int[max];
        r = new double[3 * max];
        p = new double[3 * max];
        f = new double[3 * max];
        u = new double[max];
    }

    /** @return the atoms in this rank's local boxes */
    int countLocal() {
        int n = 0;
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            n += boxes.nAtoms[b];
        }
        return n;
    }

    /** Adds an atom to the box its position falls in. */
    void putAtomInBox(int id, int type, double x, double y, double z, double px, double py, double pz) {
        int box = boxes.boxFromCoord(x, y, z);
        int n = boxes.nAtoms[box];
        if (n >= LinkCells.MAXATOMS) {
            throw new IllegalStateException("link cell " + box + " is full (" + LinkCells.MAXATOMS + " atoms) when adding atom " + id);
        }
        int off = box * LinkCells.MAXATOMS + n;
        boxes.nAtoms[box] = n + 1;
        gid[off] = id;
        species[off] = type;
        r[3 * off] = x;
        r[3 * off + 1] = y;
        r[3 * off + 2] = z;
        p[3 * off] = px;
        p[3 * off + 1] = py;
        p[3 * off + 2] = pz;
    }

    private void copyAtom(int from, int to) {
        gid[to] = gid[from];
        species[to] = species[from];
        System.arraycopy(r, 3 * from, r, 3 * to, 3);
        System.arraycopy(p, 3 * from, p, 3 * to, 3);
        System.arraycopy(f, 3 * from, f, 3 * to, 3);
        u[to] = u[from];
    }

    /** Moves atom {@code i} of box {@code from} to the end of box {@code to}; the last atom of {@code from} fills its place. */
    private void moveAtom(int i, int from, int to) {
        int nj = boxes.nAtoms[to];
        if (nj >= LinkCells.MAXATOMS) {
            throw new IllegalStateException("link cell " + to + " is full (" + LinkCells.MAXATOMS + " atoms)");
        }
        copyAtom(from * LinkCells.MAXATOMS + i, to * LinkCells.MAXATOMS + nj);
        boxes.nAtoms[to] = nj + 1;
        int ni = --boxes.nAtoms[from];
        if (ni > 0) {
            copyAtom(from * LinkCells.MAXATOMS + ni, from * LinkCells.MAXATOMS + i);
        }
    }

    /** Empties the halo boxes and moves every local atom that left its box to the box it is in now. */
    void updateLinkCells() {
        boxes.emptyHaloCells();
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            int off = b * LinkCells.MAXATOMS;
            int i = 0;
            while (i < boxes.nAtoms[b]) {
                int k = 3 * (off + i);
                int to = boxes.boxFromCoord(r[k], r[k + 1], r[k + 2]);
                if (to != b) {
                    moveAtom(i, b, to);
                } else {
                    i++;
                }
            }
        }
    }

    /** Sorts the atoms of every box by global id (ids, species, positions and momenta; forces are recomputed). */
    void sortAllCells(int[] order, int[] tmpI, double[] tmpD) {
        for (int b = 0; b < boxes.nTotalBoxes; b++) {
            sortCell(b, order, tmpI, tmpD);
        }
    }

    private void sortCell(int box, int[] order, int[] tmpI, double[] tmpD) {
        int n = boxes.nAtoms[box];
        if (n < 2) {
            return;
        }
        int begin = box * LinkCells.MAXATOMS;
        boolean sorted = true;
        for (int i = 1; i < n && sorted; i++) {
            sorted = gid[begin + i - 1] < gid[begin + i];
        }
        if (sorted) {
            return;
        }
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = 1; i < n; i++) { // insertion sort: a box holds at most 64 atoms
            int o = order[i];
            int key = gid[begin + o];
            int j = i - 1;
            while (j >= 0 && gid[begin + order[j]] > key) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = o;
        }
        for (int i = 0; i < n; i++) {
            int s = begin + order[i];
            tmpI[2 * i] = gid[s];
            tmpI[2 * i + 1] = species[s];
            System.arraycopy(r, 3 * s, tmpD, 6 * i, 3);
            System.arraycopy(p, 3 * s, tmpD, 6 * i + 3, 3);
        }
        for (int i = 0; i < n; i++) {
            int d = begin + i;
            gid[d] = tmpI[2 * i];
            species[d] = tmpI[2 * i + 1];
            System.arraycopy(tmpD, 6 * i, r, 3 * d, 3);
            System.arraycopy(tmpD, 6 * i + 3, p, 3 * d, 3);
        }
    }
}
