package dev.gdasync.apps.bench;

import dev.gdasync.apps.common.Medians;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The table of {@code scripts/bench --compare OLD}: an older commit's and this tree's benchmark CSVs (pingpong's or
 * msgrate's, several rounds of each, run alternately) side by side. Rows are keyed by their first two columns (mode,
 * bytes); each compared column's value is the median over the rounds of a side; the ratio is new / old. Only columns
 * both sides have are compared, so an older CSV without the newer columns still compares by the old ones.
 *
 * <p>It prints, never judges: the ratios are for a person to read, so a noisy machine cannot make it fail.
 */
public final class CsvCompare {
    /** The columns compared, where both CSVs have them, and whether a higher value is better. */
    static final Map<String, Boolean> COLUMNS = columns();

    private CsvCompare() {
    }

    private static Map<String, Boolean> columns() {
        Map<String, Boolean> m = new LinkedHashMap<>();
        m.put("oneway_us", false);
        m.put("p50_us", false);
        m.put("p99_us", false);
        m.put("msgs_per_s", true);
        return m;
    }

    /** One CSV: its header and its rows by key. */
    record Table(List<String> header, Map<String, String[]> rows) {
        static Table read(Path file) {
            List<String> lines;
            try {
                lines = Files.readAllLines(file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
            }
            if (lines.isEmpty()) {
                throw new IllegalArgumentException(file + " is empty");
            }
            Map<String, String[]> rows = new LinkedHashMap<>();
            for (String line : lines.subList(1, lines.size())) {
                String[] cells = line.split(",", -1);
                if (cells.length >= 2) {
                    rows.put(cells[0] + "," + cells[1], cells);
                }
            }
            return new Table(List.of(lines.getFirst().split(",", -1)), rows);
        }

        /** @return the value of a column in a row, or NaN where absent or empty */
        double value(String key, String column) {
            int i = header.indexOf(column);
            String[] row = rows.get(key);
            if (i < 0 || row == null || i >= row.length || row[i].isEmpty()) {
                return Double.NaN;
            }
            return Double.parseDouble(row[i]);
        }
    }

    /**
     * One compared value.
     *
     * @param key    mode,bytes
     * @param column the column
     * @param old    the older commit's median
     * @param now    this tree's median
     * @param higherIsBetter whether a higher value is the better one
     */
    record Line(String key, String column, double old, double now, boolean higherIsBetter) {
        /** @return now / old */
        double ratio() {
            return now / old;
        }

        /** @return how much faster this tree is: above 1 is faster, whichever way the column counts */
        double speedup() {
            return higherIsBetter ? now / old : old / now;
        }
    }

    /**
     * @param old the older commit's CSVs, one per round
     * @param now this tree's CSVs, one per round
     * @return every value both sides measured, in the order of this tree's first CSV
     */
    static List<Line> compare(List<Table> old, List<Table> now) {
        List<Line> lines = new ArrayList<>();
        Table first = now.getFirst();
        for (String key : first.rows().keySet()) {
            for (Map.Entry<String, Boolean> c : COLUMNS.entrySet()) {
                double o = median(old, key, c.getKey());
                double n = median(now, key, c.getKey());
                if (!Double.isNaN(o) && !Double.isNaN(n) && o > 0) {
                    lines.add(new Line(key, c.getKey(), o, n, c.getValue()));
                }
            }
        }
        return lines;
    }

    /** @return the median of a value over the rounds that have it, or NaN */
    static double median(List<Table> rounds, String key, String column) {
        double[] v = rounds.stream().mapToDouble(t -> t.value(key, column)).filter(d -> !Double.isNaN(d)).toArray();
        return v.length == 0 ? Double.NaN : Medians.of(v);
    }

    /**
     * Prints the table.
     *
     * @param lines    the values
     * @param oldLabel what the old side is (a commit)
     * @param nowLabel what this side is
     * @param rounds   rounds per side
     * @param out      where
     */
    static void print(List<Line> lines, String oldLabel, String nowLabel, int rounds, PrintStream out) {
        out.printf(Locale.ROOT, "old = %s, new = %s; each value the median of %d round%s per side, the sides run alternately%n",
                oldLabel, nowLabel, rounds, rounds == 1 ? "" : "s");
        out.printf(Locale.ROOT, "%-12s %9s %-11s %14s %14s %9s %9s%n", "mode", "bytes", "column", "old", "new", "new/old",
                "speedup");
        for (Line l : lines) {
            String[] key = l.key().split(",", 2);
            out.printf(Locale.ROOT, "%-12s %9s %-11s %14s %14s %9.3f %8.2fx%n", key[0], key[1], l.column(), fmt(l.old()),
                    fmt(l.now()), l.ratio(), l.speedup());
        }
        if (lines.isEmpty()) {
            out.println("(no row and column that both sides measured)");
        }
        out.println("speedup above 1: the new tree is faster (lower latency, higher rate); ratios of one run on this machine"
                + " only, never a pass/fail");
    }

    private static String fmt(double v) {
        return v >= 1000 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.4f", v);
    }

    /**
     * {@code CsvCompare OLD_LABEL NEW_LABEL OLD1.csv[,OLD2.csv...] NEW1.csv[,NEW2.csv...]}.
     *
     * @param args the labels and the CSV lists
     */
    public static void main(String[] args) {
        if (args.length != 4) {
            System.err.println("usage: CsvCompare OLD_LABEL NEW_LABEL OLD.csv[,OLD.csv...] NEW.csv[,NEW.csv...]");
            System.exit(2);
        }
        List<Table> old = Arrays.stream(args[2].split(",")).map(Path::of).map(Table::read).toList();
        List<Table> now = Arrays.stream(args[3].split(",")).map(Path::of).map(Table::read).toList();
        print(compare(old, now), args[0], args[1], Math.min(old.size(), now.size()), System.out);
    }
}
