package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Building the floor at first use, reusing it after, and saying why when it cannot be built. */
class CPeerBuildTest {
    @TempDir
    Path dir;

    @Test
    void theFloorIsBuiltOnceAndRunsAPingPong() throws Exception {
        if (Executables.onPath("gcc").isEmpty()) {
            System.out.println("CPeerBuildTest: skipped, gcc is not on PATH (" + CPeers.INSTALL_HINT + ")");
            Assumptions.abort("gcc is not on PATH");
        }
        CPeerBuild.Built b = CPeerBuild.build("floor", "gcc", List.of("-O2"), dir.resolve("cache"));
        assertTrue(b.path().isPresent(), String.valueOf(b.problem()));
        Path binary = b.path().get();
        long made = Files.getLastModifiedTime(binary).toMillis();
        assertEquals(binary, CPeerBuild.build("floor", "gcc", List.of("-O2"), dir.resolve("cache")).binary());
        assertEquals(made, Files.getLastModifiedTime(binary).toMillis(), "built again although nothing changed");
        // Other flags: another binary.
        assertTrue(!binary.equals(CPeerBuild.build("floor", "gcc", List.of("-O1"), dir.resolve("cache")).binary()));
        // Only the binaries are left: no source or temporary file.
        try (var files = Files.list(dir.resolve("cache"))) {
            assertEquals(2, files.count());
        }
        Process p = new ProcessBuilder(binary.toString(), "8", "50", "10", "-1", "-1").start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor());
        CPeer.CPeerRun run = TripsOutput.parse("floor", out, 50);
        assertEquals(50, run.tripNanos().length);
        assertTrue(run.totalNanos() > 0);
    }

    @Test
    void theFloorRefusesBadArguments() throws Exception {
        Assumptions.assumeTrue(Executables.onPath("gcc").isPresent(), "gcc is not on PATH");
        Path binary = CPeerBuild.build("floor", "gcc", List.of("-O2"), dir).binary();
        Process p = new ProcessBuilder(binary.toString(), "0", "50", "10", "-1", "-1").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(2, p.waitFor());
        assertTrue(out.contains("BYTES and ITERS must be positive"), out);
    }

    @Test
    void aMissingCompilerOrSourceIsSaid() {
        CPeerBuild.Built b = CPeerBuild.build("floor", "no-such-compiler-gdasync", List.of(), dir);
        assertTrue(b.path().isEmpty());
        assertEquals("no-such-compiler-gdasync is not on PATH", b.problem());
        Assumptions.assumeTrue(Executables.onPath("gcc").isPresent(), "gcc is not on PATH");
        CPeerBuild.Built none = CPeerBuild.build("no-such-source", "gcc", List.of(), dir);
        assertTrue(none.problem().contains("cpeers/no-such-source.c is missing"), none.problem());
    }

    @Test
    void aFailingCompilationGivesTheCompilersWords() {
        Assumptions.assumeTrue(Executables.onPath("gcc").isPresent(), "gcc is not on PATH");
        CPeerBuild.Built b = CPeerBuild.build("floor", "gcc", List.of("-O2", "-DBYTES_UNDEFINED", "-include", "/no/such/header.h"), dir);
        assertTrue(b.path().isEmpty());
        assertTrue(b.problem().contains("failed") && b.problem().contains("/no/such/header.h"), b.problem());
    }
}
