package dev.gdasync.apps.comd;

import java.io.PrintStream;

/** What a potential tells the simulation: the species, the lattice it prefers and its cutoff. */
interface Potential {
    /** @return the cutoff distance in Angstroms */
    double cutoff();

    /** @return the atom's mass in internal units */
    double mass();

    /** @return the equilibrium lattice constant in Angstroms */
    double lattice();

    /** @return the lattice type, "FCC" */
    String latticeType();

    /** @return the element's name */
    String name();

    /** @return the element's atomic number */
    int atomicNo();

    /** Prints the "Potential data" lines of CoMD's header. */
    void describe(PrintStream out);
}
