package dev.gdasync.apps.nbc;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** OSU's table, the engines side by side, and the CSV of every row. */
final class OverlapReport {
    static final String CSV_HEADER = "coll,engine,ranks,bytes,iters,overall_us,compute_us,test_us,pure_us,overlap_pct";

    private OverlapReport() {
    }

    static void header(String coll, int ranks, List<String> engines, PrintStream out) {
        out.println();
        out.printf(Locale.ROOT, "# OSU MPI-style Non-blocking %s Latency Test, %d ranks (gdasync libmp.coll)%n",
                coll.substring(1), ranks);
        out.println("# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait");
        StringBuilder h = new StringBuilder(String.format(Locale.ROOT, "%-10s", "# Size"));
        for (String e : engines) {
            h.append(String.format(Locale.ROOT, " | %-8s %11s %11s %15s %10s", e, "Overall(us)", "Compute(us)",
                    "Pure Comm.(us)", "Overlap(%)"));
        }
        out.println(h);
    }

    static void line(List<OverlapRow> rows, PrintStream out) {
        StringBuilder l = new StringBuilder(String.format(Locale.ROOT, "%-10d", rows.getFirst().bytes()));
        for (OverlapRow r : rows) {
            l.append(String.format(Locale.ROOT, " | %-8s %11.2f %11.2f %15.2f %10.2f", "", r.overall(), r.compute(),
                    r.pure(), r.overlap()));
        }
        out.println(l);
        out.flush();
    }

    static String csv(List<OverlapRow> rows) {
        List<String> lines = new ArrayList<>();
        lines.add(CSV_HEADER);
        for (OverlapRow r : rows) {
            lines.add(String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.2f", r.coll(), r.engine(), r.ranks(),
                    r.bytes(), r.iters(), r.overall(), r.compute(), r.test(), r.pure(), r.overlap()));
        }
        return String.join("\n", lines) + "\n";
    }

    static void writeCsv(List<OverlapRow> rows, Path file) throws IOException {
        Files.writeString(file, csv(rows), StandardCharsets.UTF_8);
    }
}
