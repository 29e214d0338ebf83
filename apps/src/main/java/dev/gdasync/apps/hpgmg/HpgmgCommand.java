package dev.gdasync.apps.hpgmg;

import dev.gdasync.libmp.cli.CommandLines;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The command line: upstream's two arguments, the modes, and the benchmark's options. */
@Command(name = "hpgmg", mixinStandardHelpOptions = true, version = "hpgmg (gdasync) 0.1.0",
        description = "HPGMG-FV, the 4th-order finite-volume multigrid benchmark, with its boundary exchanges in the "
                + "MPI model (mpj: MPJ Express), libmp on the CPU (host), on a host stream (sa) and in a fused KI "
                + "exchange kernel (ki). As upstream's hpgmg-fv: log2 of the box dimension, boxes per rank.")
final class HpgmgCommand implements CommandLines.Checked {
    enum Mode { MPJ, HOST, SA, KI }

    @Parameters(index = "0", paramLabel = "LOG2_BOX", description = "log2 of the box dimension, 4..9 (4: 16^3 boxes)")
    int log2Box;

    @Parameters(index = "1", paramLabel = "BOXES_PER_RANK", description = "target boxes per rank")
    int boxesPerRank;

    @Option(names = "--mode", split = ",", paramLabel = "MODE",
            description = "comma list of mpj, host, sa, ki; measured side by side (default: ${DEFAULT-VALUE})")
    List<String> modes = new ArrayList<>(List.of("host"));

    @Option(names = "--solves", paramLabel = "N", description = "timed solves per level and mode, after as many warm-up solves (default: ${DEFAULT-VALUE})")
    int solves = 10;

    @Option(names = "--warmup-seconds", paramLabel = "S", description = "go on warming up (after the --solves warm-up "
            + "solves) for at least S seconds and until the solves stop getting faster (at most 4 S), so the JIT has "
            + "compiled every mode's path before the timed solves; 0: exactly --solves warm-up solves (default: ${DEFAULT-VALUE})")
    double warmupSeconds = 5;

    @Option(names = "--levels", paramLabel = "N", description = "how many of upstream's three problem sizes (h, 2h, 4h) to run (default: ${DEFAULT-VALUE})")
    int levels = 3;

    @Option(names = "--csv", paramLabel = "FILE", description = "append one row per mode and size: mode,ranks,log2_box,boxes,dof,seconds_per_solve,dof_per_s,norm")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE", description = "after appending to --csv, draw every row of that file "
            + "(time per solve vs box size, a panel per rank count, a line per mode) into this PNG")
    Path plot;

    @Option(names = "--quiet", description = "print the summary only, not upstream's per-solve lines and tables")
    boolean quiet;

    List<Mode> parsedModes() {
        List<Mode> out = new ArrayList<>();
        for (String m : modes) {
            Mode mode = switch (m.strip().toLowerCase(Locale.ROOT)) {
                case "mpj" -> Mode.MPJ;
                case "host" -> Mode.HOST;
                case "sa" -> Mode.SA;
                case "ki" -> Mode.KI;
                default -> throw new IllegalArgumentException("--mode: unknown mode '" + m + "' (mpj, host, sa, ki)");
            };
            if (!out.contains(mode)) {
                out.add(mode);
            }
        }
        return out;
    }

    @Override
    public void check() {
        if (log2Box > 9 && Integer.bitCount(log2Box) != 1) {
            throw new IllegalArgumentException("box size " + log2Box + " is not a power of two; the first argument is log2 of"
                    + " the box dimension, 4..9");
        }
        if (log2Box > 9) {
            throw new IllegalArgumentException("the first argument is log2 of the box dimension (4..9): for boxes of "
                    + log2Box + "^3 give " + Integer.numberOfTrailingZeros(log2Box));
        }
        if (log2Box < 4) {
            throw new IllegalArgumentException("log2 box dimension must be at least 4 (boxes of 16^3), got " + log2Box);
        }
        if (boxesPerRank < 1) {
            throw new IllegalArgumentException("boxes per rank must be at least 1, got " + boxesPerRank);
        }
        if (solves < 1) {
            throw new IllegalArgumentException("--solves must be at least 1, got " + solves);
        }
        if (!(warmupSeconds >= 0 && warmupSeconds <= 3600)) {
            throw new IllegalArgumentException("--warmup-seconds must be between 0 and 3600, got " + warmupSeconds);
        }
        if (levels < 1 || levels > 3) {
            throw new IllegalArgumentException("--levels must be 1, 2 or 3, got " + levels);
        }
        if (plot != null && csv == null) {
            throw new IllegalArgumentException("--plot draws the rows of the --csv file: give --csv FILE too");
        }
        for (Path p : new Path[]{csv, plot}) {
            Path parent = p == null ? null : p.toAbsolutePath().getParent();
            if (parent != null && !java.nio.file.Files.isDirectory(parent)) {
                throw new IllegalArgumentException("cannot write " + p + ": folder " + parent + " does not exist");
            }
        }
        parsedModes();
    }
}
