package dev.gdasync.test.architecture;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No main source file of any module is longer than {@value #MAX_LINES} lines unless it says why near its top: a
 * comment line beginning "Why this file is long:" in its first {@value #HEAD_LINES} lines (issue 34). A long file
 * with no reason is a class doing several things; the reason, where there is one, is read before the code. And every
 * package of main code says what it holds in a {@code package-info.java}: its room, its layer, what it may call.
 */
class SourceFileLengthTest {
    static final int MAX_LINES = 600;
    static final int HEAD_LINES = 40;
    static final String REASON = "Why this file is long:";

    @Test
    void everyLongMainSourceFileSaysWhy() throws IOException {
        Path root = Path.of(System.getProperty("gdasync.root", "..")).toAbsolutePath().normalize();
        List<Path> sources = new ArrayList<>();
        for (String module : List.of("gdsync", "libmp", "ki-kernels", "apps")) {
            Path main = root.resolve(module).resolve("src/main/java");
            assertTrue(Files.isDirectory(main), "no main sources at " + main);
            try (Stream<Path> files = Files.walk(main)) {
                files.filter(p -> p.toString().endsWith(".java")).sorted().forEach(sources::add);
            }
        }
        assertTrue(sources.size() > 100, "found the modules' sources: " + sources.size());
        List<String> unexplained = new ArrayList<>();
        for (Path p : sources) {
            List<String> lines = Files.readAllLines(p);
            if (lines.size() > MAX_LINES
                    && lines.stream().limit(HEAD_LINES).noneMatch(l -> l.trim().matches("(//|\\*|/\\*+)\\s*" + REASON + ".*"))) {
                unexplained.add(root.relativize(p) + " (" + lines.size() + " lines)");
            }
        }
        assertEquals(List.of(), unexplained, "main source files over " + MAX_LINES + " lines with no \"" + REASON
                + "\" comment line in their first " + HEAD_LINES + " lines");
    }

    @Test
    void everyMainPackageSaysWhatItHolds() throws IOException {
        Path root = Path.of(System.getProperty("gdasync.root", "..")).toAbsolutePath().normalize();
        List<String> silent = new ArrayList<>();
        int packages = 0;
        for (String module : List.of("gdsync", "libmp", "ki-kernels", "apps")) {
            Path main = root.resolve(module).resolve("src/main/java");
            try (Stream<Path> dirs = Files.walk(main)) {
                for (Path dir : dirs.filter(Files::isDirectory).filter(d -> !d.equals(main)).sorted().toList()) {
                    boolean hasClasses;
                    try (Stream<Path> files = Files.list(dir)) {
                        hasClasses = files.anyMatch(p -> p.toString().endsWith(".java"));
                    }
                    if (hasClasses) {
                        packages++;
                        if (!Files.isRegularFile(dir.resolve("package-info.java"))) {
                            silent.add(root.relativize(dir).toString());
                        }
                    }
                }
            }
        }
        assertTrue(packages > 50, "found the modules' packages: " + packages);
        assertEquals(List.of(), silent, "main packages with no package-info.java");
    }
}
