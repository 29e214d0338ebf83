package dev.gdasync.apps.collectives;

import dev.gdasync.apps.pingpong.LatencyPlot;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What rank 0 prints and writes after a run: a table line per row with its ratio to Open MPI's median at the same
 * collective and size ({@code x ompi}), the targets ({@link BenchTargets}), the CSV ({@link BenchRow#CSV_HEADER}) and
 * one plot per collective ({@code FILE-allreduce.png}, ..., {@code FILE-barrier.png}: time against size, a line per
 * method; the barrier a bar per method, {@link BarrierChart}).
 */
final class BenchReport {
    private BenchReport() {
    }

    /**
     * @param measured the rows, as measured
     * @param csv  the CSV file, or null
     * @param plot the plots' file name ({@code FILE.png}), or null
     * @param out  where the table goes
     * @throws IOException if the CSV cannot be written
     */
    static void write(List<BenchRow> measured, Path csv, Path plot, PrintStream out) throws IOException {
        // Each collective's sizes in turn, a size's methods together (gdasync's, then the baselines, as measured).
        List<BenchRow> rows = measured.stream().sorted(Comparator
                .comparing((BenchRow r) -> BenchCollective.of(r.collective())).thenComparingLong(BenchRow::bytes))
                .toList();
        out.printf("%-10s %-12s %5s %10s %6s %12s %10s %9s%n", "collective", "method", "ranks", "bytes", "iters",
                "median_us", "MB/s", "x ompi");
        for (BenchRow r : rows) {
            out.printf(Locale.ROOT, "%-10s %-12s %5d %10d %6d %12.2f %10s %9s%n", r.collective(), r.method(),
                    r.ranks(), r.bytes(), r.iters(), r.medianMicros(), r.bytes() == 0 ? "-"
                            : String.format(Locale.ROOT, "%.2f", r.megabytesPerSecond()),
                    xOmpi(rows, r).map(BenchReport::ratio).orElse("-"));
        }
        BenchTargets.print(rows, out);
        if (csv != null) {
            StringBuilder s = new StringBuilder(BenchRow.CSV_HEADER).append('\n');
            rows.forEach(r -> s.append(r.csv()).append(',')
                    .append(xOmpi(rows, r).map(x -> String.format(Locale.ROOT, "%.3f", x)).orElse("")).append('\n'));
            Files.writeString(csv, s);
            out.println("collectives: wrote " + csv);
        }
        if (plot != null && !rows.isEmpty()) {
            String ranks = rows.getFirst().ranks() + " ranks";
            for (BenchCollective c : BenchCollective.values()) {
                List<BenchRow> mine = rows.stream().filter(r -> r.collective().equals(c.label())).toList();
                if (mine.isEmpty()) {
                    continue;
                }
                Path file = plotFile(plot, c.label());
                if (c.sized()) {
                    LatencyPlot.write(mine.stream().map(r -> new LatencyPlot.Point(r.method(), (int) r.bytes(),
                                    r.medianMicros())).toList(), c.label() + " on " + ranks + ": time per collective",
                            "time per collective (\u00b5s, log scale)", file);
                } else {
                    BarrierChart.write(mine, c.label() + " on " + ranks + ": time per barrier", file);
                }
                out.println("collectives: wrote " + file);
            }
        }
    }

    /** @return the row's ratio to Open MPI's median at its collective and size, if Open MPI ran it */
    static Optional<Double> xOmpi(List<BenchRow> rows, BenchRow r) {
        return BenchTargets.ratio(rows, r, "ompi");
    }

    /** @return FILE-COLL.png beside FILE.png */
    static Path plotFile(Path plot, String coll) {
        String name = plot.getFileName().toString();
        String base = name.endsWith(".png") ? name.substring(0, name.length() - 4) : name;
        return plot.resolveSibling(base + "-" + coll + ".png");
    }

    /** @return a ratio with three significant digits or more: 0.512, 1.93, 27.4, 15338 */
    static String ratio(double x) {
        return String.format(Locale.ROOT, x < 10 ? "%.2f" : x < 100 ? "%.1f" : "%.0f", x);
    }

    /** @return a size in words: 8 B, 4 KiB, 1 MiB */
    static String size(long bytes) {
        if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1024 && bytes % 1024 == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }
}
