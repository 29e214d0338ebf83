package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ping-pong's command line as a user meets it, in this JVM (the mistakes are answered before any rank meets
 * another; PingPongLaunchTest runs one under the launcher): help, version, one line per mistake and a hint.
 */
class PingPongCommandLineTest {
    @TempDir
    Path dir;

    private record Ran(int status, String out, String err) {
    }

    private static Ran run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = PingPong.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Ran(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpAndVersionGoToStandardOutputWithoutColourWhenNotATerminal() {
        Ran help = run("--help");
        assertEquals(0, help.status());
        assertTrue(help.out().startsWith("Usage: scripts/mprun -np 2 pingpong [-hV]"), help.out());
        assertTrue(help.out().contains("--validate"), help.out());
        assertTrue(help.out().chars().noneMatch(c -> c == 0x1b), "no escape codes:\n" + help.out());
        assertEquals("", help.err());
        Ran version = run("--version");
        assertEquals(0, version.status());
        assertTrue(version.out().startsWith("pingpong (gdasync "), version.out());
    }

    @Test
    void anUnknownLastOptionIsUnknownAndTheUsageIsNotPrinted() {
        Ran r = run("--iters", "10", "--bogus");
        assertEquals(2, r.status());
        assertEquals("pingpong: unknown option: '--bogus'\nRun 'scripts/mprun -np 2 pingpong --help' for the options.\n", r.err());
        assertEquals("", r.out());
    }

    @Test
    void anOutputFileThatCannotBeWrittenIsRefusedBeforeAnyWorkAndNoFolderIsMade() {
        Path missing = dir.resolve("missing");
        Ran r = run("--csv", missing.resolve("x.csv").toString());
        assertEquals(2, r.status());
        assertEquals("pingpong: invalid value for option '--csv': cannot write '" + missing.resolve("x.csv") + "': the folder "
                + missing + " does not exist\nRun 'scripts/mprun -np 2 pingpong --help' for the options.\n", r.err());
        assertEquals("", r.out(), "nothing ran");
        assertTrue(Files.notExists(missing), "no folder is made");
    }
}
