package dev.gdasync.apps.comd;

import java.util.Arrays;

/**
 * One rank's EAM force computation, in CoMD's three passes: {@link #densityPass} (pair energies and forces, the
 * electron density of each local atom, its embedding energy and the derivative {@code dfEmbed}), the halo exchange of
 * {@code dfEmbed} (done by the caller: {@link ForceHalo}), and {@link #embeddingForcePass}.
 */
final class EamForce {
    private final Eam pot;
    private final LinkCells boxes;
    private final Atoms atoms;
    /** The derivative of the embedding energy per atom: local atoms computed here, halo atoms received. */
    final double[] dfEmbed;
    private final double[] rhobar;
    private final int[] nbrBoxes = new int[27];
    private final double[] v = new double[2];
    private final double[] w = new double[2];
    private double etot;

    EamForce(Eam pot, LinkCells boxes, Atoms atoms) {
        this.pot = pot;
        this.boxes = boxes;
        this.atoms = atoms;
        int max = LinkCells.MAXATOMS * boxes.nTotalBoxes;
        this.dfEmbed = new double[max];
        this.rhobar = new double[max];
    }

    /** @return the potential energy of this rank, complete after {@link #densityPass} */
    double energy() {
        return etot;
    }

    /** Pair terms and the embedding energy; leaves {@code dfEmbed} of local atoms for the halo exchange. */
    void densityPass() {
        double rCut2 = pot.cutoff() * pot.cutoff();
        int size = boxes.nTotalBoxes * LinkCells.MAXATOMS;
        double[] f = atoms.f;
        double[] u = atoms.u;
        double[] r = atoms.r;
        Arrays.fill(f, 0, 3 * size, 0.0);
        Arrays.fill(u, 0, size, 0.0);
        Arrays.fill(dfEmbed, 0, size, 0.0);
        Arrays.fill(rhobar, 0, size, 0.0);
        double e = 0.0;
        int nLocal = boxes.nLocalBoxes;
        for (int iBox = 0; iBox < nLocal; iBox++) {
            int nI = boxes.nAtoms[iBox];
            boxes.neighborBoxes(iBox, nbrBoxes);
            for (int jTmp = 0; jTmp < 27; jTmp++) {
                int jBox = nbrBoxes[jTmp];
                if (jBox < iBox) {
                    continue;
                }
                int nJ = boxes.nAtoms[jBox];
                boolean jLocal = jBox < nLocal;
                for (int iOff = LinkCells.MAXATOMS * iBox, ii = 0; ii < nI; ii++, iOff++) {
                    for (int jOff = LinkCells.MAXATOMS * jBox, ij = 0; ij < nJ; ij++, jOff++) {
                        if (iBox == jBox && ij <= ii) {
                            continue;
                        }
                        double dx = r[3 * iOff] - r[3 * jOff];
                        double dy = r[3 * iOff + 1] - r[3 * jOff + 1];
                        double dz = r[3 * iOff + 2] - r[3 * jOff + 2];
                        double r2 = 0.0;
                        r2 += dx * dx;
                        r2 += dy * dy;
                        r2 += dz * dz;
                        if (r2 > rCut2) {
                            continue;
                        }
                        double rr = Math.sqrt(r2);
                        pot.phi.interpolate(rr, v);
                        pot.rho.interpolate(rr, w);
                        double phiTmp = v[0];
                        double dPhi = v[1];
                        double rhoTmp = w[0];
                        f[3 * iOff] -= dPhi * dx / rr;
                        f[3 * jOff] += dPhi * dx / rr;
                        f[3 * iOff + 1] -= dPhi * dy / rr;
                        f[3 * jOff + 1] += dPhi * dy / rr;
                        f[3 * iOff + 2] -= dPhi * dz / rr;
                        f[3 * jOff + 2] += dPhi * dz / rr;
                        if (jLocal) {
                            e += phiTmp;
                        } else {
                            e += 0.5 * phiTmp;
                        }
                        u[iOff] += 0.5 * phiTmp;
                        u[jOff] += 0.5 * phiTmp;
                        rhobar[iOff] += rhoTmp;
                        rhobar[jOff] += rhoTmp;
                    }
                }
            }
        }
        for (int iBox = 0; iBox < nLocal; iBox++) {
            int nI = boxes.nAtoms[iBox];
            for (int iOff = LinkCells.MAXATOMS * iBox, ii = 0; ii < nI; ii++, iOff++) {
                pot.f.interpolate(rhobar[iOff], v);
                dfEmbed[iOff] = v[1];
                e += v[0];
                u[iOff] += v[0];
            }
        }
        etot = e;
    }

    /** The forces from the embedding energy, once {@code dfEmbed} of the halo atoms arrived. */
    void embeddingForcePass() {
        double rCut2 = pot.cutoff() * pot.cutoff();
        double[] f = atoms.f;
        double[] r = atoms.r;
        int nLocal = boxes.nLocalBoxes;
        for (int iBox = 0; iBox < nLocal; iBox++) {
            int nI = boxes.nAtoms[iBox];
            boxes.neighborBoxes(iBox, nbrBoxes);
            for (int jTmp = 0; jTmp < 27; jTmp++) {
                int jBox = nbrBoxes[jTmp];
                if (jBox < iBox) {
                    continue;
                }
                int nJ = boxes.nAtoms[jBox];
                for (int iOff = LinkCells.MAXATOMS * iBox, ii = 0; ii < nI; ii++, iOff++) {
                    for (int jOff = LinkCells.MAXATOMS * jBox, ij = 0; ij < nJ; ij++, jOff++) {
                        if (iBox == jBox && ij <= ii) {
                            continue;
                        }
                        double dx = r[3 * iOff] - r[3 * jOff];
                        double dy = r[3 * iOff + 1] - r[3 * jOff + 1];
                        double dz = r[3 * iOff + 2] - r[3 * jOff + 2];
                        double r2 = 0.0;
                        r2 += dx * dx;
                        r2 += dy * dy;
                        r2 += dz * dz;
                        if (r2 >= rCut2) {
                            continue;
                        }
                        double rr = Math.sqrt(r2);
                        pot.rho.interpolate(rr, w);
                        double dRho = w[1];
                        double s = dfEmbed[iOff] + dfEmbed[jOff];
                        f[3 * iOff] -= s * dRho * dx / rr;
                        f[3 * jOff] += s * dRho * dx / rr;
                        f[3 * iOff + 1] -= s * dRho * dy / rr;
                        f[3 * jOff + 1] += s * dRho * dy / rr;
                        f[3 * iOff + 2] -= s * dRho * dz / rr;
                        f[3 * jOff + 2] += s * dRho * dz / rr;
                    }
                }
            }
        }
    }
}
