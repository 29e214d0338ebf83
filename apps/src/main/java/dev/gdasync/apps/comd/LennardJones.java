package dev.gdasync.apps.comd;

import java.io.PrintStream;

/**
 * The Lennard-Jones potential of CoMD for copper: sigma 2.315 Angstrom, epsilon 0.167 eV, cutoff 2.5 sigma, shifted to
 * zero at the cutoff; FCC lattice of 3.615 Angstrom.
 */
final class LennardJones implements Potential {
    static final double SIGMA = 2.315;
    static final double EPSILON = 0.167;
    private static final double POT_SHIFT = 1.0;
    private final double mass = 63.55 * Units.AMU_TO_INTERNAL_MASS;
    private final double cutoff = 2.5 * SIGMA;

    @Override
    public double cutoff() {
        return cutoff;
    }

    @Override
    public double mass() {
        return mass;
    }

    @Override
    public double lattice() {
        return 3.615;
    }

    @Override
    public String latticeType() {
        return "FCC";
    }

    @Override
    public String name() {
        return "Cu";
    }

    @Override
    public int atomicNo() {
        return 29;
    }

    @Override
    public void describe(PrintStream out) {
        out.println("  Potential type   : Lennard-Jones");
        out.println("  Species name     : " + name());
        out.println("  Atomic number    : " + atomicNo());
        out.println("  Mass             : " + Text.g(mass / Units.AMU_TO_INTERNAL_MASS) + " amu");
        out.println("  Lattice Type     : " + latticeType());
        out.println("  Lattice spacing  : " + Text.g(lattice()) + " Angstroms");
        out.println("  Cutoff           : " + Text.g(cutoff) + " Angstroms");
        out.println("  Epsilon          : " + Text.g(EPSILON) + " eV");
        out.println("  Sigma            : " + Text.g(SIGMA) + " Angstroms");
    }

    /**
     * Computes forces and per-atom energies of the local atoms from every pair within the cutoff (local pairs once,
     * pairs with a halo atom on each side, half the energy each).
     *
     * @return the potential energy of this rank
     */
    double force(LinkCells boxes, Atoms atoms, int[] nbrBoxes) {
        double sigma = SIGMA;
        double epsilon = EPSILON;
        double rCut2 = cutoff * cutoff;
        double ePot = 0.0;
        int fSize = boxes.nTotalBoxes * LinkCells.MAXATOMS;
        double[] f = atoms.f;
        double[] u = atoms.u;
        double[] r = atoms.r;
        int[] gid = atoms.gid;
        java.util.Arrays.fill(f, 0, 3 * fSize, 0.0);
        java.util.Arrays.fill(u, 0, fSize, 0.0);
        double s6 = sigma * sigma * sigma * sigma * sigma * sigma;
        double rCut6 = s6 / (rCut2 * rCut2 * rCut2);
        double eShift = POT_SHIFT * rCut6 * (rCut6 - 1.0);
        int nLocal = boxes.nLocalBoxes;
        for (int iBox = 0; iBox < nLocal; iBox++) {
            int nI = boxes.nAtoms[iBox];
            if (nI == 0) {
                continue;
            }
            boxes.neighborBoxes(iBox, nbrBoxes);
            for (int jTmp = 0; jTmp < 27; jTmp++) {
                int jBox = nbrBoxes[jTmp];
                int nJ = boxes.nAtoms[jBox];
                if (nJ == 0) {
                    continue;
                }
                boolean jLocal = jBox < nLocal;
                for (int iOff = iBox * LinkCells.MAXATOMS, ii = 0; ii < nI; ii++, iOff++) {
                    int iId = gid[iOff];
                    double rix = r[3 * iOff];
                    double riy = r[3 * iOff + 1];
                    double riz = r[3 * iOff + 2];
                    for (int jOff = jBox * LinkCells.MAXATOMS, ij = 0; ij < nJ; ij++, jOff++) {
                        if (jLocal && gid[jOff] <= iId) {
                            continue; // local-local pairs once
                        }
                        double dx = rix - r[3 * jOff];
                        double dy = riy - r[3 * jOff + 1];
                        double dz = riz - r[3 * jOff + 2];
                        double r2 = 0.0;
                        r2 += dx * dx;
                        r2 += dy * dy;
                        r2 += dz * dz;
                        if (r2 > rCut2) {
                            continue;
                        }
                        r2 = 1.0 / r2; // from here on, r2 is 1 / r^2
                        double r6 = s6 * (r2 * r2 * r2);
                        double eLocal = r6 * (r6 - 1.0) - eShift;
                        u[iOff] += 0.5 * eLocal;
                        u[jOff] += 0.5 * eLocal;
                        if (jLocal) {
                            ePot += eLocal;
                        } else {
                            ePot += 0.5 * eLocal;
                        }
                        double fr = -4.0 * epsilon * r6 * r2 * (12.0 * r6 - 6.0);
                        f[3 * iOff] -= dx * fr;
                        f[3 * jOff] += dx * fr;
                        f[3 * iOff + 1] -= dy * fr;
                        f[3 * jOff + 1] += dy * fr;
                        f[3 * iOff + 2] -= dz * fr;
                        f[3 * jOff + 2] += dz * fr;
                    }
                }
            }
        }
        return ePot * 4.0 * epsilon;
    }
}
