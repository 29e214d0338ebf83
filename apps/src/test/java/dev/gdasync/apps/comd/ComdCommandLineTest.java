package dev.gdasync.apps.comd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad command lines end before the ranks meet, with one line that says what is wrong (mistakes picocli sees add its
 * hint line, "Run '... --help' for the options.").
 */
class ComdCommandLineTest {
    @TempDir
    Path dir;

    private record Outcome(int status, String out, String err) {
        List<String> errLines() {
            return err.lines().toList();
        }
    }

    private static Outcome run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Comd.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static void assertOneLine(Outcome o, String... parts) {
        assertEquals(2, o.status(), o.toString());
        List<String> lines = o.errLines();
        assertTrue(lines.size() == 1 || lines.size() == 2 && lines.get(1).startsWith("Run '"),
                "one line (and picocli's hint to --help): " + o.err());
        for (String p : parts) {
            assertTrue(o.err().contains(p), "'" + p + "' in: " + o.err());
        }
    }

    @Test
    void moreRanksThanLinkCellsIsRefusedSayingWhatToChange() {
        assertOneLine(run("-x", "4", "-i", "2"), "comd: the simulation is too small for 2 ranks along x", "give -x 7 or more");
        assertOneLine(run("-z", "6", "-k", "2"), "too small for 2 ranks along z", "give -z 7 or more");
        assertOneLine(run("-e", "-y", "5", "-j", "2"), "too small for 2 ranks along y");
    }

    @Test
    void aMissingPotentialFileIsNamed() {
        Path missing = dir.resolve("nowhere");
        assertOneLine(run("-e", "-d", missing.toString()),
                "comd: cannot read the EAM potential file " + missing.resolve("Cu_u6.eam") + ": no such file");
        assertOneLine(run("-e", "-p", "Cu01.eam.alloy"), "only Cu_u6.eam ships with the app; give its folder with -d");
    }

    @Test
    void aMalformedPotentialFileIsNamed() throws Exception {
        Files.writeString(dir.resolve("bad.eam"), "Cu\n29 63.55 3.615 FCC\n500 0.0005 500 0.01 4.95\n1.0 2.0 oops\n");
        assertOneLine(run("-e", "-d", dir.toString(), "-p", "bad.eam"), "the EAM potential file " + dir.resolve("bad.eam"),
                "not in funcfl format");
        Files.writeString(dir.resolve("short.eam"), "Cu\n29 63.55 3.615 FCC\n5 0.0005 5 0.01 4.95\n1 2 3\n");
        assertOneLine(run("-e", "-d", dir.toString(), "-p", "short.eam"), "holds 3 table values, its header promises 15");
    }

    @Test
    void optionsOutOfRangeAreRefused() {
        Outcome o = run("-N", "0");
        assertEquals(2, o.status());
        assertTrue(o.errLines().getFirst().equals("comd: -N must be at least 1, got 0"), o.err());
        o = run("--mode", "host,mpi");
        assertEquals(2, o.status());
        assertTrue(o.errLines().getFirst().contains("unknown mode 'mpi' (mpj, host, sa or ki)"), o.err());
        o = run("-t", "setfl", "-e");
        assertTrue(o.errLines().getFirst().contains("-t setfl: this CoMD reads funcfl potential files only"), o.err());
        o = run("-p", "x.eam");
        assertTrue(o.errLines().getFirst().contains("-d and -p choose the EAM potential file: add -e"), o.err());
        o = run("--plot", dir.resolve("p.png").toString());
        assertTrue(o.errLines().getFirst().contains("--plot draws the rows of the --csv file"), o.err());
    }

    @Test
    void helpListsCoMDsOptions() {
        Outcome o = run("--help");
        assertEquals(0, o.status());
        for (String opt : new String[]{"-x", "-y", "-z", "-N", "-n", "-T", "-D", "-e", "-i", "-j", "-k", "--mode", "--csv", "--plot"}) {
            assertTrue(o.out().contains(opt), opt + " in the help");
        }
    }
}
