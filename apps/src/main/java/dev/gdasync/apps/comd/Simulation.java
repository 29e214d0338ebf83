package dev.gdasync.apps.comd;

import java.util.ArrayList;
import java.util.List;

/**
 * One rank's share of the simulation (CoMD's SimFlat): its brick of the decomposition, its link cells and atoms, the
 * potential, the halo exchanges, and the steps of the velocity Verlet integrator written once for every
 * communication model: the {@link StepDriver} decides where each piece runs and how the halos travel.
 */
final class Simulation {
    final ComdOptions options;
    final Potential pot;
    final Domain domain;
    final LinkCells boxes;
    final Atoms atoms;
    final AtomHalo atomHalo;
    final ForceHalo forceHalo;
    private final LennardJones lj;
    private final EamForce eam;
    private final double invMass;
    private final int[] nbrBoxes = new int[27];
    private final int[] sortOrder = new int[LinkCells.MAXATOMS];
    private final int[] sortInts = new int[2 * LinkCells.MAXATOMS];
    private final double[] sortDoubles = new double[6 * LinkCells.MAXATOMS];
    /** This rank's potential energy after the last force computation; the total after {@link #kineticEnergy}. */
    double ePotential;
    /** The total kinetic energy after {@link #kineticEnergy}. */
    double eKinetic;
    private double ePotentialLocal;

    /**
     * @param options the run
     * @param pot     the potential
     * @param lattice the lattice constant
     * @param rank    this rank
     */
    Simulation(ComdOptions options, Potential pot, double lattice, int rank) {
        this.options = options;
        this.pot = pot;
        double[] extent = {options.nx() * lattice, options.ny() * lattice, options.nz() * lattice};
        this.domain = new Domain(new int[]{options.xproc(), options.yproc(), options.zproc()}, rank, extent);
        this.boxes = new LinkCells(domain, pot.cutoff());
        this.atoms = new Atoms(boxes);
        this.atomHalo = new AtomHalo(domain, boxes, atoms);
        this.invMass = 1.0 / pot.mass();
        if (pot instanceof Eam e) {
            this.lj = null;
            this.eam = new EamForce(e, boxes, atoms);
            this.forceHalo = new ForceHalo(domain, boxes, eam.dfEmbed);
        } else {
            this.lj = (LennardJones) pot;
            this.eam = null;
            this.forceHalo = null;
        }
    }

    /** @return the halo exchanges this simulation runs */
    List<Halo> halos() {
        List<Halo> h = new ArrayList<>(List.of(atomHalo));
        if (forceHalo != null) {
            h.add(forceHalo);
        }
        return h;
    }

    /** Places this rank's atoms of the FCC lattice, at rest; ids number the global lattice. */
    void createFccLattice(double lat) {
        double[][] basis = {{0.25, 0.25, 0.25}, {0.25, 0.75, 0.75}, {0.75, 0.25, 0.75}, {0.75, 0.75, 0.25}};
        int[] begin = new int[3];
        int[] end = new int[3];
        for (int i = 0; i < 3; i++) {
            begin[i] = (int) Math.floor(domain.localMin[i] / lat);
            end[i] = (int) Math.ceil(domain.localMax[i] / lat);
        }
        int ny = options.ny();
        int nz = options.nz();
        for (int ix = begin[0]; ix < end[0]; ix++) {
            for (int iy = begin[1]; iy < end[1]; iy++) {
                for (int iz = begin[2]; iz < end[2]; iz++) {
                    for (int ib = 0; ib < 4; ib++) {
                        double rx = (ix + basis[ib][0]) * lat;
                        double ry = (iy + basis[ib][1]) * lat;
                        double rz = (iz + basis[ib][2]) * lat;
                        if (rx < domain.localMin[0] || rx >= domain.localMax[0]
                                || ry < domain.localMin[1] || ry >= domain.localMax[1]
                                || rz < domain.localMin[2] || rz >= domain.localMax[2]) {
                            continue;
                        }
                        int id = ib + 4 * (iz + nz * (iy + ny * ix));
                        atoms.putAtomInBox(id, 0, rx, ry, rz, 0.0, 0.0, 0.0);
                    }
                }
            }
        }
    }

    /** Draws Maxwell-Boltzmann momenta per atom id, removes the drift, and scales to the temperature exactly. */
    void setTemperature(double temperature, Collectives coll) {
        double mass = pot.mass();
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            for (int off = b * LinkCells.MAXATOMS, i = 0; i < boxes.nAtoms[b]; i++, off++) {
                double sigma = Math.sqrt(Units.KB_EV * temperature / mass);
                CoMDRandom rnd = new CoMDRandom(atoms.gid[off], 123);
                atoms.p[3 * off] = mass * sigma * rnd.gasdev();
                atoms.p[3 * off + 1] = mass * sigma * rnd.gasdev();
                atoms.p[3 * off + 2] = mass * sigma * rnd.gasdev();
            }
        }
        if (temperature == 0.0) {
            return;
        }
        setVcm(new double[]{0, 0, 0}, coll);
        kineticEnergy(coll);
        long nGlobal = globalAtoms(coll);
        double temp = (eKinetic / nGlobal) / Units.KB_EV / 1.5;
        double scale = Math.sqrt(temperature / temp);
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            for (int off = b * LinkCells.MAXATOMS, i = 0; i < boxes.nAtoms[b]; i++, off++) {
                atoms.p[3 * off] *= scale;
                atoms.p[3 * off + 1] *= scale;
                atoms.p[3 * off + 2] *= scale;
            }
        }
        kineticEnergy(coll);
    }

    /** Shifts every momentum so that the center of mass moves at {@code newVcm} (Angstrom/fs). */
    void setVcm(double[] newVcm, Collectives coll) {
        double[] local = new double[4];
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            for (int off = b * LinkCells.MAXATOMS, i = 0; i < boxes.nAtoms[b]; i++, off++) {
                local[0] += atoms.p[3 * off];
                local[1] += atoms.p[3 * off + 1];
                local[2] += atoms.p[3 * off + 2];
                local[3] += pot.mass();
            }
        }
        double[] sum = coll.sum(local);
        double totalMass = sum[3];
        double[] shift = new double[3];
        for (int k = 0; k < 3; k++) {
            shift[k] = newVcm[k] - sum[k] / totalMass;
        }
        double mass = pot.mass();
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            for (int off = b * LinkCells.MAXATOMS, i = 0; i < boxes.nAtoms[b]; i++, off++) {
                atoms.p[3 * off] += mass * shift[0];
                atoms.p[3 * off + 1] += mass * shift[1];
                atoms.p[3 * off + 2] += mass * shift[2];
            }
        }
    }

    /** Moves every atom by a uniform random offset of at most {@code delta} per axis, drawn per atom id. */
    void randomDisplacements(double delta) {
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            for (int off = b * LinkCells.MAXATOMS, i = 0; i < boxes.nAtoms[b]; i++, off++) {
                CoMDRandom rnd = new CoMDRandom(atoms.gid[off], 457);
                atoms.r[3 * off] += (2.0 * rnd.lcg61() - 1.0) * delta;
                atoms.r[3 * off + 1] += (2.0 * rnd.lcg61() - 1.0) * delta;
                atoms.r[3 * off + 2] += (2.0 * rnd.lcg61() - 1.0) * delta;
            }
        }
    }

    /** @return the atoms of all ranks */
    long globalAtoms(Collectives coll) {
        return (long) coll.sum(atoms.countLocal())[0];
    }

    /** Sums the potential and kinetic energy over all ranks into {@link #ePotential} and {@link #eKinetic}. */
    void kineticEnergy(Collectives coll) {
        double e = 0;
        double half = 0.5 / pot.mass();
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            for (int off = b * LinkCells.MAXATOMS, i = 0; i < boxes.nAtoms[b]; i++, off++) {
                double px = atoms.p[3 * off];
                double py = atoms.p[3 * off + 1];
                double pz = atoms.p[3 * off + 2];
                e += (px * px + py * py + pz * pz) * half;
            }
        }
        double[] sum = coll.sum(ePotentialLocal, e);
        ePotential = sum[0];
        eKinetic = sum[1];
    }

    /** Redistributes the atoms (link cells, the atom halo exchange along x, y, z, sorting) through the driver. */
    void redistributeAtoms(StepDriver d) {
        d.beginRound();
        d.run(Phase.REDISTRIBUTE, atoms::updateLinkCells);
        for (int axis = 0; axis < 3; axis++) {
            d.exchange(atomHalo, axis);
        }
        d.run(Phase.REDISTRIBUTE, () -> atoms.sortAllCells(sortOrder, sortInts, sortDoubles));
    }

    /** Computes the forces through the driver (for EAM with its dfEmbed exchange between the passes). */
    void computeForce(StepDriver d) {
        if (lj != null) {
            d.run(Phase.FORCE, () -> ePotentialLocal = lj.force(boxes, atoms, nbrBoxes));
        } else {
            d.run(Phase.FORCE, eam::densityPass);
            for (int axis = 0; axis < 3; axis++) {
                d.exchange(forceHalo, axis);
            }
            d.run(Phase.FORCE, () -> {
                eam.embeddingForcePass();
                ePotentialLocal = eam.energy();
            });
        }
    }

    /** Runs {@code n} velocity Verlet steps through the driver, then syncs and sums the energies. */
    void timestep(StepDriver d, int n, double dt, Collectives coll) {
        for (int s = 0; s < n; s++) {
            d.run(Phase.INTEGRATE, () -> advanceVelocity(0.5 * dt));
            d.run(Phase.INTEGRATE, () -> advancePosition(dt));
            redistributeAtoms(d);
            computeForce(d);
            d.run(Phase.INTEGRATE, () -> advanceVelocity(0.5 * dt));
        }
        d.sync();
        kineticEnergy(coll);
    }

    private void advanceVelocity(double dt) {
        double[] p = atoms.p;
        double[] f = atoms.f;
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            for (int off = b * LinkCells.MAXATOMS, i = 0; i < boxes.nAtoms[b]; i++, off++) {
                p[3 * off] += dt * f[3 * off];
                p[3 * off + 1] += dt * f[3 * off + 1];
                p[3 * off + 2] += dt * f[3 * off + 2];
            }
        }
    }

    private void advancePosition(double dt) {
        double[] p = atoms.p;
        double[] r = atoms.r;
        for (int b = 0; b < boxes.nLocalBoxes; b++) {
            for (int off = b * LinkCells.MAXATOMS, i = 0; i < boxes.nAtoms[b]; i++, off++) {
                r[3 * off] += dt * p[3 * off] * invMass;
                r[3 * off + 1] += dt * p[3 * off + 1] * invMass;
                r[3 * off + 2] += dt * p[3 * off + 2] * invMass;
            }
        }
    }
}
