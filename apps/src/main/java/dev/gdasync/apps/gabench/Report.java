package dev.gdasync.apps.gabench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/** The results as a table (one line per panel and size, the methods side by side) and as CSV. */
final class Report {
    static final List<String> METHODS = List.of("ga", "ga-reg", "raw", "mpj");
    static final String CSV_HEADER = "method,layout,op,bytes,runs,iters,reps,median_us,min_us,max_us,mb_per_s";

    private Report() {
    }

    /**
     * Prints the table: microseconds per operation (median of reps) per method, the array layer's cost as ratios to
     * raw, and MB/s per method. A method without a row for a size shows "-".
     */
    static void table(List<Row> rows, PrintStream out) {
        Map<String, Map<Integer, Map<String, Row>>> byPanel = new LinkedHashMap<>();
        for (Row r : rows) {
            byPanel.computeIfAbsent(r.panel(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(r.bytes(), k -> new LinkedHashMap<>()).put(r.method(), r);
        }
        out.printf(Locale.ROOT, "%-12s %9s %6s | %9s %9s %9s %9s | %6s %6s %6s | %8s %8s %8s %8s%n", "op layout", "bytes",
                "runs", "ga us", "ga-reg us", "raw us", "mpj us", "ga/raw", "reg/raw", "mpj/raw", "ga MB/s", "reg MB/s",
                "raw MB/s", "mpj MB/s");
        for (Map.Entry<String, Map<Integer, Map<String, Row>>> p : byPanel.entrySet()) {
            for (int bytes : new TreeSet<>(p.getValue().keySet())) {
                Map<String, Row> m = p.getValue().get(bytes);
                Row any = m.values().iterator().next();
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-12s %9d %6d |", p.getKey(), bytes, any.runs()));
                for (String method : METHODS) {
                    Row r = m.get(method);
                    line.append(r == null ? String.format(Locale.ROOT, " %9s", "-") : String.format(Locale.ROOT, " %9.2f", r.medianMicros()));
                }
                line.append(" |");
                Row raw = m.get("raw");
                for (String method : List.of("ga", "ga-reg", "mpj")) {
                    Row r = m.get(method);
                    line.append(r == null || raw == null ? String.format(Locale.ROOT, " %6s", "-")
                            : String.format(Locale.ROOT, " %6.2f", r.medianMicros() / raw.medianMicros()));
                }
                line.append(" |");
                for (String method : METHODS) {
                    Row r = m.get(method);
                    line.append(r == null ? String.format(Locale.ROOT, " %8s", "-") : String.format(Locale.ROOT, " %8.1f", r.megabytesPerSecond()));
                }
                out.println(line);
            }
        }
    }

    /** @return the CSV text: a header, then one line per row */
    static String csv(List<Row> rows) {
        List<String> lines = new ArrayList<>();
        lines.add(CSV_HEADER);
        for (Row r : rows) {
            lines.add(String.format(Locale.ROOT, "%s,%s,%s,%d,%d,%d,%d,%.4f,%.4f,%.4f,%.2f", r.method(), r.layout(), r.op(),
                    r.bytes(), r.runs(), r.iters(), r.repMicros().length, r.medianMicros(), r.minMicros(), r.maxMicros(),
                    r.megabytesPerSecond()));
        }
        return String.join("\n", lines) + "\n";
    }

    static void writeCsv(List<Row> rows, Path file) throws IOException {
        Files.writeString(file, csv(rows), StandardCharsets.UTF_8);
    }
}
