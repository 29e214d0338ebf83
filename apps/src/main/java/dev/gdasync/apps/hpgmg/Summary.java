package dev.gdasync.apps.hpgmg;

import dev.gdasync.apps.common.CsvFile;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Upstream's performance summary per mode, the gains of the modes over each other, and the CSV rows. */
final class Summary {
    static final String CSV_HEADER = "mode,ranks,log2_box,boxes,h,dof,seconds_per_solve,dof_per_s,norm,rel";

    private Summary() {
    }

    static void print(PrintStream out, List<String> rows, HpgmgCommand o, ProblemSize size, int ranks) {
        out.println();
        out.println();
        out.println("===== Performance Summary ======================================================");
        Map<String, Map<String, Double>> perMode = new LinkedHashMap<>();
        List<String> csv = new ArrayList<>();
        for (String row : rows) {
            String[] f = row.split(" ");
            String mode = f[0];
            double h = Double.parseDouble(f[1]), dof = Double.parseDouble(f[2]), sec = Double.parseDouble(f[3]);
            out.printf(Locale.ROOT, "  [%s] h=%.15e  DOF=%.15e  time=%.6f  DOF/s=%.3e  MPI=%d  OMP=1  norm=%.15e%n",
                    mode, h, dof, sec, dof / sec, ranks, Double.parseDouble(f[4]));
            perMode.computeIfAbsent(mode, k -> new LinkedHashMap<>()).put(f[1], sec);
            csv.add(String.format(Locale.ROOT, "%s,%d,%d,%d,%s,%.0f,%.9f,%.6e,%s,%s", mode, ranks, size.log2BoxDim(),
                    size.boxes(), f[1], dof, sec, dof / sec, f[4], f[5]));
        }
        List<String> modes = new ArrayList<>(perMode.keySet());
        if (modes.size() > 1) {
            out.println();
            out.println("===== Gains (time per solve of the column's mode over the row's mode, minus 1; + means the row is faster) =====");
            for (String h : perMode.get(modes.getFirst()).keySet()) {
                out.printf(Locale.ROOT, "  h=%s%n", h);
                for (String a : modes) {
                    StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "    %-5s", a));
                    for (String b : modes) {
                        if (!a.equals(b)) {
                            Double ta = perMode.get(a).get(h), tb = perMode.get(b).get(h);
                            if (ta != null && tb != null) {
                                s.append(String.format(Locale.ROOT, "  vs %s %+.1f%%", b, 100.0 * (tb / ta - 1.0)));
                            }
                        }
                    }
                    out.println(s);
                }
            }
        }
        if (o.csv != null) {
            try {
                CsvFile.append(o.csv, CSV_HEADER, csv);
            } catch (IOException e) {
                throw new UncheckedIOException("could not write " + o.csv + ": " + e, e);
            }
            if (o.plot != null) {
                try {
                    SolvePlot.write(SolvePlot.read(o.csv), o.plot);
                } catch (IOException e) {
                    throw new UncheckedIOException("could not read " + o.csv + " back for the plot: " + e, e);
                }
                out.println("plot of every row of " + o.csv + " written to " + o.plot);
            }
        }
    }
}
