package dev.gdasync.apps.common;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CsvFileTest {
    @TempDir
    Path dir;

    @Test
    void theHeaderComesOnceAndRunsAddTheirRows() throws Exception {
        Path csv = dir.resolve("runs.csv");
        CsvFile.append(csv, "a,b", List.of("1,2"));
        CsvFile.append(csv, "a,b", List.of("3,4", "5,6"));
        assertEquals("a,b\n1,2\n3,4\n5,6\n", Files.readString(csv));
    }

    @Test
    void anEmptyFileGetsTheHeader() throws Exception {
        Path csv = Files.createFile(dir.resolve("empty.csv"));
        CsvFile.append(csv, "a,b", List.of("1,2"));
        assertEquals("a,b\n1,2\n", Files.readString(csv));
    }
}
