package dev.gdasync.apps.comd;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A CoMD run as its command line gives it (CoMD's own options, then the project's).
 *
 * @param eam         {@code -e}: the EAM potential instead of Lennard-Jones
 * @param potDir      {@code -d}: the potential file's folder, or null for the file shipped with the app
 * @param potName     {@code -p}: the potential file
 * @param nx          {@code -x}: unit cells along x
 * @param ny          {@code -y}: unit cells along y
 * @param nz          {@code -z}: unit cells along z
 * @param xproc       {@code -i}: ranks along x
 * @param yproc       {@code -j}: ranks along y
 * @param zproc       {@code -k}: ranks along z
 * @param nSteps      {@code -N}: time steps
 * @param printRate   {@code -n}: steps between energy lines
 * @param dt          {@code -D}: the time step in fs
 * @param lat         {@code -l}: the lattice constant in Angstroms, or negative for the potential's
 * @param temperature {@code -T}: the initial temperature in K
 * @param delta       {@code -r}: the initial random displacement in Angstroms
 * @param modes       {@code --mode}: the communication models, run side by side
 * @param reps        {@code --reps}: runs of each mode, interleaved
 * @param csv         {@code --csv}: where to add the timing rows, or null
 * @param plot        {@code --plot}: where to draw the plot of the whole CSV, or null
 */
record ComdOptions(boolean eam, Path potDir, String potName, int nx, int ny, int nz, int xproc, int yproc, int zproc,
                   int nSteps, int printRate, double dt, double lat, double temperature, double delta, List<Mode> modes,
                   int reps, Path csv, Path plot) {

    /** @return the ranks the decomposition needs */
    int ranks() {
        return xproc * yproc * zproc;
    }

    /** @return the time steps actually run: CoMD runs whole print intervals */
    int stepsRun() {
        return (nSteps + printRate - 1) / printRate * printRate;
    }

    /** @return "lj" or "eam" */
    String potentialLabel() {
        return eam ? "eam" : "lj";
    }

    /** @return CoMD's own options, for a child that runs one mode (MPJ) */
    List<String> simulationArgs() {
        List<String> a = new ArrayList<>();
        if (eam) {
            a.add("-e");
        }
        if (potDir != null) {
            a.addAll(List.of("-d", potDir.toString()));
        }
        a.addAll(List.of("-p", potName, "-x", "" + nx, "-y", "" + ny, "-z", "" + nz, "-i", "" + xproc, "-j", "" + yproc,
                "-k", "" + zproc, "-N", "" + nSteps, "-n", "" + printRate, "-D", num(dt), "-l", num(lat), "-T", num(temperature),
                "-r", num(delta)));
        return a;
    }

    private static String num(double v) {
        return Double.toString(v); // reads back to the same double
    }
}
