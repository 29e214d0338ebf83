package dev.gdasync.apps.comd;

import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.OutputFile;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** CoMD's command line as picocli reads it; {@link #options()} gives the {@link ComdOptions}. */
@Command(name = "scripts/mprun -np N comd", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        sortOptions = false, usageHelpAutoWidth = false,
        description = {"CoMD 1.1 (molecular dynamics of copper: Lennard-Jones or EAM) on -i x -j x -k ranks, its halo exchange"
                + " and atom redistribution in the communication models given by --mode, run side by side.",
                "Modes: mpj (MPJ Express Sendrecv, as CoMD's MPI), host (libmp on the CPU), sa (a host stream runs the steps"
                        + " and the exchanges), ki (each axis exchange is a fused kernel on the host KI executor)."},
        optionListHeading = "%nOptions:%n",
        footer = {"", "The number of ranks (mprun -np) must be -i x -j x -k. Times per step leave out the first print interval"
                + " (JIT warm-up)."})
final class ComdCommand implements CommandLines.Checked {
    @Option(names = {"-e", "--doeam"}, description = "compute EAM potentials (default: Lennard-Jones)")
    boolean eam;

    @Option(names = {"-d", "--potDir"}, paramLabel = "DIR",
            description = "potential directory (default: the Cu_u6.eam shipped with the app)")
    Path potDir;

    @Option(names = {"-p", "--potName"}, paramLabel = "FILE", description = "potential name (default Cu_u6.eam)")
    String potName = Eam.BUNDLED;

    @Option(names = {"-t", "--potType"}, paramLabel = "TYPE", description = "potential type: funcfl (the only one read here)")
    String potType = "funcfl";

    @Option(names = {"-x", "--nx"}, paramLabel = "N", description = "number of unit cells in x (default 20)")
    int nx = 20;

    @Option(names = {"-y", "--ny"}, paramLabel = "N", description = "number of unit cells in y (default 20)")
    int ny = 20;

    @Option(names = {"-z", "--nz"}, paramLabel = "N", description = "number of unit cells in z (default 20)")
    int nz = 20;

    @Option(names = {"-i", "--xproc"}, paramLabel = "N", description = "processors in x direction (default 1)")
    int xproc = 1;

    @Option(names = {"-j", "--yproc"}, paramLabel = "N", description = "processors in y direction (default 1)")
    int yproc = 1;

    @Option(names = {"-k", "--zproc"}, paramLabel = "N", description = "processors in z direction (default 1)")
    int zproc = 1;

    @Option(names = {"-N", "--nSteps"}, paramLabel = "N", description = "number of time steps (default 100)")
    int nSteps = 100;

    @Option(names = {"-n", "--printRate"}, paramLabel = "N", description = "number of steps between output (default 10)")
    int printRate = 10;

    @Option(names = {"-D", "--dt"}, paramLabel = "FS", description = "time step in fs (default 1)")
    double dt = 1.0;

    @Option(names = {"-l", "--lat"}, paramLabel = "A", description = "lattice parameter in Angstroms (default: the potential's)")
    double lat = -1.0;

    @Option(names = {"-T", "--temp"}, paramLabel = "K", description = "initial temperature in K (default 600)")
    double temperature = 600.0;

    @Option(names = {"-r", "--delta"}, paramLabel = "A", description = "initial random displacement in Angstroms (default 0)")
    double delta = 0.0;

    @Option(names = "--mode", paramLabel = "M[,M...]", converter = ModesConverter.class,
            description = "communication models, run side by side in this order: mpj, host, sa, ki (default host)")
    List<Mode> modes = List.of(Mode.HOST);

    @Option(names = "--reps", paramLabel = "R", description = "runs of each mode, interleaved; the median step time is"
            + " reported (default 1)")
    int reps = 1;

    @Option(names = "--csv", paramLabel = "FILE", converter = OutputFile.class,
            description = "add one timing row per mode to FILE (its folder must exist; the header is written to a new file)")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE.png", converter = OutputFile.class,
            description = "draw the time per step of every row of the --csv file into FILE.png")
    Path plot;

    /** @return the command line with the project's settings */
    CommandLine commandLine() {
        return CommandLines.of(this);
    }

    @Override
    public void check() {
        positive("-x", nx);
        positive("-y", ny);
        positive("-z", nz);
        positive("-i", xproc);
        positive("-j", yproc);
        positive("-k", zproc);
        positive("-N", nSteps);
        positive("-n", printRate);
        positive("--reps", reps);
        if (!(dt > 0) || Double.isInfinite(dt)) {
            throw new IllegalArgumentException("-D must be a positive time step in fs, got " + dt);
        }
        if (!(temperature >= 0) || Double.isInfinite(temperature)) {
            throw new IllegalArgumentException("-T must be a temperature of 0 K or more, got " + temperature);
        }
        if (!(delta >= 0) || Double.isInfinite(delta)) {
            throw new IllegalArgumentException("-r must be a displacement of 0 or more Angstroms, got " + delta);
        }
        if (Double.isNaN(lat) || Double.isInfinite(lat) || lat == 0) {
            throw new IllegalArgumentException("-l must be a positive lattice constant (or negative for the potential's), got " + lat);
        }
        if (!potType.equals("funcfl")) {
            throw new IllegalArgumentException("-t " + potType + ": this CoMD reads funcfl potential files only");
        }
        if (!eam && (potDir != null || !potName.equals(Eam.BUNDLED))) {
            throw new IllegalArgumentException("-d and -p choose the EAM potential file: add -e");
        }
        if (potDir == null && !potName.equals(Eam.BUNDLED)) {
            throw new IllegalArgumentException("-p " + potName + ": only " + Eam.BUNDLED + " ships with the app; give its folder with -d");
        }
        if (plot != null && csv == null) {
            throw new IllegalArgumentException("--plot draws the rows of the --csv file: give --csv too");
        }
        if (plot != null && !plot.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".png")) {
            throw new IllegalArgumentException("--plot writes a PNG: name the file *.png, got " + plot);
        }
    }

    private static void positive(String option, int v) {
        if (v < 1) {
            throw new IllegalArgumentException(option + " must be at least 1, got " + v);
        }
    }

    /** @return the options read */
    ComdOptions options() {
        return new ComdOptions(eam, potDir, potName, nx, ny, nz, xproc, yproc, zproc, nSteps, printRate, dt, lat, temperature,
                delta, modes, reps, csv, plot);
    }

    /** --mode: a comma-separated list of distinct modes. */
    static final class ModesConverter implements ITypeConverter<List<Mode>> {
        @Override
        public List<Mode> convert(String v) {
            List<Mode> out = new ArrayList<>();
            for (String s : v.split(",", -1)) {
                String m = s.strip();
                if (m.isEmpty()) {
                    throw new TypeConversionException("an empty mode in '" + v + "' (a comma-separated list of mpj, host, sa, ki)");
                }
                Mode mode;
                try {
                    mode = Mode.of(m);
                } catch (IllegalArgumentException e) {
                    throw new TypeConversionException(e.getMessage());
                }
                if (out.contains(mode)) {
                    throw new TypeConversionException(m + " is given twice");
                }
                out.add(mode);
            }
            return List.copyOf(out);
        }
    }
}
