package dev.gdasync.apps.comd;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * CoMD's main program for one mode on one rank: set up the lattice, the temperature and the first forces, then
 * print the energies every {@code printRate} steps, and validate energy and atom count at the end, printing what
 * CoMD prints (rank 0 only).
 */
final class ComdRun {
    private ComdRun() {
    }

    /** What a test may do to a run: change the initial state, look at the final one. */
    interface Hooks {
        /** No hooks. */
        Hooks NONE = new Hooks() {
        };

        /** Called after the initial lattice, temperature and displacements, before the first redistribution. */
        default void afterSetup(Simulation sim, Collectives coll) {
        }

        /** Called after the last step, on every rank. */
        default void atEnd(Simulation sim) {
        }
    }

    static RunResult run(ComdOptions o, Potential pot, Collectives coll, Function<Simulation, Function<Integer, StepDriver>> drivers,
                         String label, PrintStream out) {
        return run(o, pot, coll, drivers, label, out, Hooks.NONE);
    }

    /**
     * @param o       the run
     * @param pot     the potential
     * @param coll    the reductions across ranks
     * @param drivers opens the mode's driver for a simulation, given its number of exchange rounds
     * @param label   the mode's label
     * @param out     where rank 0 prints CoMD's output, or null to stay quiet
     * @param hooks   what a test does to the run
     * @return the result (its times and energies are rank 0's view)
     */
    static RunResult run(ComdOptions o, Potential pot, Collectives coll, Function<Simulation, Function<Integer, StepDriver>> drivers,
                         String label, PrintStream out, Hooks hooks) {
        double lattice = o.lat() < 0 ? pot.lattice() : o.lat();
        Simulation sim = new Simulation(o, pot, lattice, coll.rank());
        PrintStream p = coll.rank() == 0 ? out : null;
        sim.createFccLattice(lattice);
        long nGlobal = sim.globalAtoms(coll);
        long expected = 4L * o.nx() * o.ny() * o.nz();
        if (nGlobal != expected) {
            throw new IllegalStateException("the lattice has " + nGlobal + " atoms, not " + expected);
        }
        sim.setTemperature(o.temperature(), coll);
        sim.randomDisplacements(o.delta());
        hooks.afterSetup(sim, coll);
        int intervals = o.stepsRun() / o.printRate();
        int rounds = 1 + o.stepsRun();
        try (StepDriver d = drivers.apply(sim).apply(rounds)) {
            sim.redistributeAtoms(d);
            sim.computeForce(d);
            d.sync();
            sim.kineticEnergy(coll);
            if (p != null) {
                header(p, o, sim, lattice, label, maxOccupancy(sim, coll));
            } else {
                maxOccupancy(sim, coll);
            }
            long atoms0 = sim.globalAtoms(coll);
            double eTot0 = (sim.ePotential + sim.eKinetic) / atoms0;
            if (p != null) {
                p.println();
                p.println("Initial energy : " + Text.fixed(eTot0, 14, 12) + ", atom count : " + atoms0 + " ");
                p.println();
                p.println("#                                                                                         Performance");
                p.println("#  Loop   Time(fs)       Total Energy   Potential Energy     Kinetic Energy  Temperature   (us/atom)     # Atoms");
            }
            List<RunResult.EnergyLine> lines = new ArrayList<>();
            int iStep = 0;
            int prevStep = -1;
            long elapsed = 0;
            long timedStart = 0;
            int timedFrom = 0;
            long nGlobalNow = atoms0;
            for (int k = 0; k <= intervals; k++) {
                nGlobalNow = sim.globalAtoms(coll);
                int nLocal = sim.atoms.countLocal();
                lines.add(line(p, sim, iStep, prevStep, elapsed, nGlobalNow, nLocal, o.dt()));
                prevStep = iStep;
                if (k == intervals) {
                    break;
                }
                if (k == 1 || (k == 0 && intervals == 1)) {
                    // Times leave out the first interval (the JIT's warm-up) when there are several.
                    coll.barrier();
                    d.timers().reset();
                    timedStart = System.nanoTime();
                    timedFrom = iStep;
                }
                long t0 = System.nanoTime();
                sim.timestep(d, o.printRate(), o.dt(), coll);
                elapsed = System.nanoTime() - t0;
                iStep += o.printRate();
            }
            coll.barrier();
            long loopNs = System.nanoTime() - timedStart;
            int timedSteps = iStep - timedFrom;
            hooks.atEnd(sim);
            double eFinal = (sim.ePotential + sim.eKinetic) / nGlobalNow;
            if (p != null) {
                validation(p, eTot0, eFinal, atoms0, nGlobalNow);
            }
            Timers t = d.timers();
            double[] phases = coll.sum(t.get(Phase.FORCE), t.get(Phase.REDISTRIBUTE), t.get(Phase.EXCHANGE));
            double perStep = 1e6 * timedSteps * coll.size();
            RunResult r = new RunResult(label, List.copyOf(lines), eTot0, eFinal, atoms0, nGlobalNow, timedSteps,
                    loopNs / 1e6 / timedSteps, phases[0] / perStep, phases[1] / perStep, phases[2] / perStep);
            if (p != null) {
                p.println(String.format(java.util.Locale.ROOT, "Time per step (%s, steps %d..%d, mean over %d ranks): %.3f ms;"
                                + " force %.3f ms, redistribution %.3f ms, exchange %.3f ms", label, timedFrom, iStep, coll.size(),
                        r.stepMs(), r.forceMs(), r.redistributeMs(), r.exchangeMs()));
                p.flush();
            }
            return r;
        }
    }

    private static int maxOccupancy(Simulation sim, Collectives coll) {
        int local = 0;
        for (int b = 0; b < sim.boxes.nLocalBoxes; b++) {
            local = Math.max(local, sim.boxes.nAtoms[b]);
        }
        int max = 0;
        for (double[] v : coll.allGather(new double[]{local})) {
            max = Math.max(max, (int) v[0]);
        }
        return max;
    }

    private static RunResult.EnergyLine line(PrintStream p, Simulation s, int iStep, int prevStep, long elapsedNs, long nGlobal,
                                             int nLocal, double dt) {
        int nEval = iStep - prevStep;
        double time = iStep * dt;
        double eTotal = (s.ePotential + s.eKinetic) / nGlobal;
        double eK = s.eKinetic / nGlobal;
        double eU = s.ePotential / nGlobal;
        double temp = (s.eKinetic / nGlobal) / (Units.KB_EV * 1.5);
        double perAtom = 1.0e6 * (elapsedNs / 1e9) / ((double) nEval * nLocal);
        if (p != null) {
            p.println(" " + String.format(java.util.Locale.ROOT, "%6d", iStep) + " " + Text.fixed(time, 10, 2) + " " + Text.fixed(eTotal, 18, 12) + " "
                    + Text.fixed(eU, 18, 12) + " " + Text.fixed(eK, 18, 12) + " " + Text.fixed(temp, 12, 4) + " "
                    + Text.fixed(perAtom, 10, 4) + " " + String.format(java.util.Locale.ROOT, "%12d", nGlobal));
            p.flush();
        }
        return new RunResult.EnergyLine(iStep, time, eTotal, eU, eK, temp, nGlobal);
    }

    private static void header(PrintStream p, ComdOptions o, Simulation sim, double lattice, String label, int maxOcc) {
        p.println("CoMD (" + label + "): " + Comd.describe(Mode.of(label)));
        p.println("Command Line Parameters:");
        p.println("  doeam: " + (o.eam() ? 1 : 0));
        p.println("  potDir: " + (o.potDir() == null ? "(shipped with the app)" : o.potDir()));
        p.println("  potName: " + o.potName());
        p.println("  potType: funcfl");
        p.println("  nx: " + o.nx());
        p.println("  ny: " + o.ny());
        p.println("  nz: " + o.nz());
        p.println("  xproc: " + o.xproc());
        p.println("  yproc: " + o.yproc());
        p.println("  zproc: " + o.zproc());
        p.println("  Lattice constant: " + Text.g(o.lat()) + " Angstroms");
        p.println("  nSteps: " + o.nSteps());
        p.println("  printRate: " + o.printRate());
        p.println("  Time step: " + Text.g(o.dt()) + " fs");
        p.println("  Initial Temperature: " + Text.g(o.temperature()) + " K");
        p.println("  Initial Delta: " + Text.g(o.delta()) + " Angstroms");
        p.println();
        Domain d = sim.domain;
        LinkCells b = sim.boxes;
        p.println("Simulation data: ");
        p.println("  Total atoms        : " + 4L * o.nx() * o.ny() * o.nz());
        p.println("  Min global bounds  : [ " + Text.fixed(d.globalMin[0], 14, 10) + ", " + Text.fixed(d.globalMin[1], 14, 10) + ", "
                + Text.fixed(d.globalMin[2], 14, 10) + " ]");
        p.println("  Max global bounds  : [ " + Text.fixed(d.globalMax[0], 14, 10) + ", " + Text.fixed(d.globalMax[1], 14, 10) + ", "
                + Text.fixed(d.globalMax[2], 14, 10) + " ]");
        p.println();
        p.println("Decomposition data: ");
        p.println("  Processors         : " + String.format(java.util.Locale.ROOT, "%6d,%6d,%6d", d.procGrid[0], d.procGrid[1], d.procGrid[2]));
        p.println("  Local boxes        : " + String.format(java.util.Locale.ROOT, "%6d,%6d,%6d = %8d", b.gridSize[0], b.gridSize[1], b.gridSize[2],
                b.nLocalBoxes));
        p.println("  Box size           : [ " + Text.fixed(b.boxSize[0], 14, 10) + ", " + Text.fixed(b.boxSize[1], 14, 10) + ", "
                + Text.fixed(b.boxSize[2], 14, 10) + " ]");
        p.println("  Box factor         : [ " + Text.fixed(b.boxSize[0] / sim.pot.cutoff(), 14, 10) + ", "
                + Text.fixed(b.boxSize[1] / sim.pot.cutoff(), 14, 10) + ", " + Text.fixed(b.boxSize[2] / sim.pot.cutoff(), 14, 10) + " ] ");
        p.println("  Max Link Cell Occupancy: " + maxOcc + " of " + LinkCells.MAXATOMS);
        p.println();
        p.println("Potential data: ");
        sim.pot.describe(p);
        p.flush();
    }

    private static void validation(PrintStream p, double e0, double eFinal, long atoms0, long atoms) {
        p.println();
        p.println();
        p.println("Simulation Validation:");
        p.println("  Initial energy  : " + Text.fixed(e0, 14, 12));
        p.println("  Final energy    : " + Text.fixed(eFinal, 14, 12));
        p.println("  eFinal/eInitial : " + Text.fixed(eFinal / e0, 0, 6));
        long delta = atoms - atoms0;
        if (delta == 0) {
            p.println("  Final atom count : " + atoms + ", no atoms lost");
        } else {
            p.println("#############################");
            p.println("# WARNING: " + String.format(java.util.Locale.ROOT, "%6d", delta) + " atoms lost #");
            p.println("#############################");
        }
        p.println();
        p.flush();
    }
}
