package dev.gdasync.apps.comd;

import dev.gdasync.apps.common.CsvFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The benchmark's CSV: one row per run and mode, added to the file (a header first when the file is new), so one file
 * collects several runs (potentials, ranks, sizes).
 */
final class ComdCsv {
    static final String HEADER = "potential,ranks,decomposition,cells,atoms,mode,reps,timed_steps,step_ms,force_ms,redistribute_ms,"
            + "exchange_ms,gain_vs_mpj_pct";

    /**
     * One row.
     *
     * @param potential     lj or eam
     * @param ranks         the ranks
     * @param decomposition "IxJxK"
     * @param cells         "XxYxZ" unit cells
     * @param atoms         the atoms
     * @param mode          the mode
     * @param reps          runs of the mode (the row is the median one)
     * @param timedSteps    steps timed
     * @param stepMs        time per step
     * @param forceMs       force per step
     * @param redistributeMs redistribution per step
     * @param exchangeMs    exchange per step
     * @param gainPct       gain over mpj's step time in percent, NaN without mpj
     */
    record Row(String potential, int ranks, String decomposition, String cells, long atoms, String mode, int reps, int timedSteps,
               double stepMs, double forceMs, double redistributeMs, double exchangeMs, double gainPct) {
        String format() {
            return String.format(Locale.ROOT, "%s,%d,%s,%s,%d,%s,%d,%d,%.4f,%.4f,%.4f,%.4f,%s", potential, ranks, decomposition, cells,
                    atoms, mode, reps, timedSteps, stepMs, forceMs, redistributeMs, exchangeMs,
                    Double.isNaN(gainPct) ? "" : String.format(Locale.ROOT, "%.2f", gainPct));
        }

        /** @return the case this row measures, for the plot ("lj 2 ranks 20x20x20") */
        String caseLabel() {
            return potential + " " + ranks + "r " + cells;
        }

        static Row parse(String line) {
            String[] f = line.split(",", -1);
            return new Row(f[0], Integer.parseInt(f[1]), f[2], f[3], Long.parseLong(f[4]), f[5], Integer.parseInt(f[6]),
                    Integer.parseInt(f[7]), Double.parseDouble(f[8]), Double.parseDouble(f[9]), Double.parseDouble(f[10]),
                    Double.parseDouble(f[11]), f[12].isEmpty() ? Double.NaN : Double.parseDouble(f[12]));
        }
    }

    private ComdCsv() {
    }

    static List<Row> rows(ComdOptions o, List<RunResult> medians) {
        RunResult mpj = medians.stream().filter(r -> r.mode().equals("mpj")).findFirst().orElse(null);
        List<Row> rows = new ArrayList<>();
        for (RunResult r : medians) {
            rows.add(new Row(o.potentialLabel(), o.ranks(), o.xproc() + "x" + o.yproc() + "x" + o.zproc(),
                    o.nx() + "x" + o.ny() + "x" + o.nz(), 4L * o.nx() * o.ny() * o.nz(), r.mode(), o.reps(), r.timedSteps(),
                    r.stepMs(), r.forceMs(), r.redistributeMs(), r.exchangeMs(), mpj == null ? Double.NaN : ComdReport.gain(mpj, r)));
        }
        return rows;
    }

    static void append(ComdOptions o, List<RunResult> medians, Path file) {
        List<String> lines = new ArrayList<>();
        for (Row r : rows(o, medians)) {
            lines.add(r.format());
        }
        try {
            CsvFile.append(file, HEADER, lines);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    static List<Row> read(Path file) {
        try {
            List<Row> rows = new ArrayList<>();
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (!line.isBlank() && !line.startsWith("potential,") && !line.startsWith("#")) {
                    rows.add(Row.parse(line.strip()));
                }
            }
            return rows;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new UncheckedIOException("cannot read " + file + ": not a comd CSV (" + e + ")", new IOException(e));
        }
    }
}
