package dev.gdasync.apps.common;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * A CSV file that runs add to: the header once, when the file is new (or empty), then each run's rows after the
 * earlier runs' ones, so one file collects a series of runs (sizes, rank counts) for a plot.
 */
public final class CsvFile {
    private CsvFile() {
    }

    /**
     * Appends rows, after the header if the file does not exist yet or is empty. Its folder must exist: no folder is
     * made.
     *
     * @param file   the CSV
     * @param header its first line, without the line end
     * @param rows   the lines to add, without line ends
     * @throws IOException if the file cannot be read or written
     */
    public static void append(Path file, String header, List<String> rows) throws IOException {
        StringBuilder text = new StringBuilder();
        if (!Files.exists(file) || Files.size(file) == 0) {
            text.append(header).append('\n');
        }
        for (String row : rows) {
            text.append(row).append('\n');
        }
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
