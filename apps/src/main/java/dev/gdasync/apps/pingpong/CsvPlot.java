package dev.gdasync.apps.pingpong;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Draws one column of a CSV whose rows are (line, message size, ...) against the size, one curve per line, as
 * {@link LatencyPlot} draws the ping-pong: {@code CsvPlot CSV LINE_COLUMN VALUE_COLUMN TITLE YLABEL PNG}. The columns
 * are named by the CSV's header; the rows of a line form its curve, in file order. {@code scripts/bench mpj} draws its
 * ping-pong with it.
 */
public final class CsvPlot {
    private CsvPlot() {
    }

    /**
     * @param args the CSV, the line column, the value column, the title, the y axis's label, the PNG
     * @throws IOException if the CSV cannot be read
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 6) {
            System.err.println("usage: CsvPlot CSV LINE_COLUMN VALUE_COLUMN TITLE YLABEL PNG");
            System.exit(2);
        }
        try {
            LatencyPlot.write(points(Files.readAllLines(Path.of(args[0])), args[1], args[2]), args[3], args[4], Path.of(args[5]));
        } catch (IllegalArgumentException | UncheckedIOException e) {
            System.err.println("CsvPlot: " + args[0] + ": " + e.getMessage());
            System.exit(1);
        }
    }

    /**
     * @param lines       the CSV's lines, header first, with a {@code bytes} column
     * @param lineColumn  the column that names each row's curve
     * @param valueColumn the column drawn
     * @return the points
     * @throws IllegalArgumentException if a column is missing or a row is not numbers where they are expected
     */
    static List<LatencyPlot.Point> points(List<String> lines, String lineColumn, String valueColumn) {
        if (lines.isEmpty()) {
            throw new IllegalArgumentException("empty: no header");
        }
        List<String> header = List.of(lines.getFirst().split(","));
        int line = column(header, lineColumn);
        int bytes = column(header, "bytes");
        int value = column(header, valueColumn);
        List<LatencyPlot.Point> out = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            String[] f = lines.get(i).split(",");
            if (f.length < header.size()) {
                throw new IllegalArgumentException("row " + (i + 1) + " has " + f.length + " columns, the header "
                        + header.size());
            }
            try {
                out.add(new LatencyPlot.Point(f[line], Integer.parseInt(f[bytes]), Double.parseDouble(f[value])));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("row " + (i + 1) + ": " + e.getMessage());
            }
        }
        return out;
    }

    private static int column(List<String> header, String name) {
        int i = header.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException("no column '" + name + "' in " + header);
        }
        return i;
    }
}
