package dev.gdasync.apps.comd;

/**
 * CoMD's units and conversion constants: distance in Angstroms, energy in eV, time in fs, so mass is in
 * eV fs^2 / Angstrom^2 (values from NIST, as CoMD 1.1 uses them).
 */
final class Units {
    /** 1 amu in kilograms. */
    static final double AMU_IN_KILOGRAMS = 1.660538921e-27;
    /** 1 fs in seconds. */
    static final double FS_IN_SECONDS = 1.0e-15;
    /** 1 Angstrom in meters. */
    static final double ANGS_IN_METERS = 1.0e-10;
    /** 1 eV in Joules. */
    static final double EV_IN_JOULES = 1.602176565e-19;
    /** Internal mass units per amu (eV fs^2 / Angstrom^2). */
    static final double AMU_TO_INTERNAL_MASS = AMU_IN_KILOGRAMS * ANGS_IN_METERS * ANGS_IN_METERS
            / (FS_IN_SECONDS * FS_IN_SECONDS * EV_IN_JOULES);
    /** Boltzmann's constant in eV/K. */
    static final double KB_EV = 8.6173324e-5;
    /** Hartrees to eV. */
    static final double HARTREE_TO_EV = 27.21138505;
    /** Bohrs to Angstroms. */
    static final double BOHR_TO_ANGS = 0.52917721092;

    private Units() {
    }
}
