package dev.gdasync.apps.comd;

import java.util.List;

/**
 * What one run of one mode gave: the energy lines and the validation (identical in every mode), and the times.
 *
 * @param mode        the mode's label
 * @param energies    the printed lines, in step order
 * @param eInitial    the total energy per atom at the start
 * @param eFinal      the total energy per atom at the end
 * @param atoms0      atoms at the start
 * @param atomsFinal  atoms at the end
 * @param timedSteps  steps the times cover (all but the first print interval, when there are several)
 * @param stepMs      wall time per step on rank 0, milliseconds
 * @param forceMs     force computation per step, milliseconds, mean over ranks
 * @param redistributeMs redistribution without its exchange per step, milliseconds, mean over ranks
 * @param exchangeMs  halo exchanges per step, milliseconds, mean over ranks
 */
record RunResult(String mode, List<EnergyLine> energies, double eInitial, double eFinal, long atoms0, long atomsFinal,
                 int timedSteps, double stepMs, double forceMs, double redistributeMs, double exchangeMs) {

    /**
     * One line of CoMD's energy table.
     *
     * @param step        the step
     * @param timeFs      the simulated time
     * @param total       total energy per atom (eV)
     * @param potential   potential energy per atom (eV)
     * @param kinetic     kinetic energy per atom (eV)
     * @param temperature the temperature (K)
     * @param atoms       the atoms
     */
    record EnergyLine(int step, double timeFs, double total, double potential, double kinetic, double temperature, long atoms) {
    }

    /** @return the line for the MPJ child's report */
    String encode() {
        StringBuilder b = new StringBuilder();
        b.append(mode).append(' ').append(hex(eInitial)).append(' ').append(hex(eFinal)).append(' ').append(atoms0).append(' ')
                .append(atomsFinal).append(' ').append(timedSteps).append(' ').append(hex(stepMs)).append(' ').append(hex(forceMs))
                .append(' ').append(hex(redistributeMs)).append(' ').append(hex(exchangeMs));
        for (EnergyLine e : energies) {
            b.append(' ').append(e.step).append(':').append(hex(e.timeFs)).append(':').append(hex(e.total)).append(':')
                    .append(hex(e.potential)).append(':').append(hex(e.kinetic)).append(':').append(hex(e.temperature))
                    .append(':').append(e.atoms);
        }
        return b.toString();
    }

    /** @return the result {@link #encode} wrote */
    static RunResult decode(String line) {
        String[] f = line.strip().split(" ");
        List<EnergyLine> lines = new java.util.ArrayList<>();
        for (int i = 10; i < f.length; i++) {
            String[] e = f[i].split(":");
            lines.add(new EnergyLine(Integer.parseInt(e[0]), dbl(e[1]), dbl(e[2]), dbl(e[3]), dbl(e[4]), dbl(e[5]),
                    Long.parseLong(e[6])));
        }
        return new RunResult(f[0], List.copyOf(lines), dbl(f[1]), dbl(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
                Integer.parseInt(f[5]), dbl(f[6]), dbl(f[7]), dbl(f[8]), dbl(f[9]));
    }

    private static String hex(double v) {
        return Double.toHexString(v);
    }

    private static double dbl(String s) {
        return Double.parseDouble(s);
    }
}
