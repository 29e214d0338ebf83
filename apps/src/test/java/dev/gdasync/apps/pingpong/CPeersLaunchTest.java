package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.testutil.ChildProcess.Finished;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The C peers' modes end to end under the launcher: two rank JVMs, rank 0 building and running the C programs
 * (floor, Open MPI, ucx_perftest) between the Java modes' runs, a few hundred round trips each. Asserts that every
 * row is there and read back (CSV, percentiles, ratios), never any timing. Where a peer's program is not installed
 * the test says so and is skipped (scripts/test installs them on Debian as root).
 */
class CPeersLaunchTest {
    @TempDir
    Path dir;

    private static void need(String... programs) {
        for (String p : programs) {
            if (Executables.onPath(p).isEmpty()) {
                String why = p + " is not on PATH (" + CPeers.INSTALL_HINT + ")";
                System.out.println("CPeersLaunchTest: skipped: " + why);
                Assumptions.abort(why);
            }
        }
    }

    @Test
    void floorAndOpenMpiRunBesideHostWithRatios() throws Exception {
        need("gcc", "mpicc", "mpirun");
        Path csv = dir.resolve("c.csv");
        Finished r = PingPongLaunchTest.mprun(Map.of(), "-np", "2", "pingpong", "--mode", "host,ompi",
                "--sizes", "8,64", "--iters", "300", "--reps", "2", "--warmup", "0", "--csv", csv.toString());
        assertEquals(0, r.status(), r.all());
        // The floor came without being asked for: the ratios need it.
        assertTrue(r.out().contains("modes floor,host,ompi"), r.all());
        assertTrue(r.out().contains("ompi: C MPI_Send/MPI_Recv under Open MPI"), r.all());
        assertTrue(r.out().contains("against the C peers of this run"), r.all());
        assertTrue(r.out().contains("8 B one-way, host against Open MPI side by side: best run"), r.all());
        List<String> lines = Files.readAllLines(csv);
        assertEquals(Csv.HEADER, lines.getFirst());
        for (String mode : List.of("floor", "host", "ompi")) {
            for (String bytes : List.of("8", "64")) {
                String row = lines.stream().filter(l -> l.startsWith(mode + "," + bytes + ",")).findFirst()
                        .orElseThrow(() -> new AssertionError("no " + mode + " " + bytes + " B row in\n" + String.join("\n", lines)));
                String[] cells = row.split(",", -1);
                assertEquals("300", cells[2], row);
                assertTrue(Double.parseDouble(cells[3]) > 0, row);
                // Every round trip was recorded (the C programs print theirs): min, p50 and max are known.
                assertFalse(cells[5].isEmpty() || cells[6].isEmpty() || cells[9].isEmpty(), row);
                assertTrue(Double.parseDouble(cells[5]) <= Double.parseDouble(cells[6]), row);
            }
        }
    }

    @Test
    void ucxPerftestGivesItsMedian() throws Exception {
        need("gcc", "ucx_perftest");
        Path csv = dir.resolve("u.csv");
        Finished r = PingPongLaunchTest.mprun(Map.of(), "-np", "2", "pingpong", "--mode", "ucx",
                "--sizes", "8", "--iters", "500", "--reps", "1", "--warmup", "0", "--csv", csv.toString());
        assertEquals(0, r.status(), r.all());
        assertTrue(r.out().contains("ucx: ucx_perftest -t tag_lat"), r.all());
        assertTrue(r.out().lines().anyMatch(l -> l.matches(".*ucx tag_bw +8 B +500 messages .* MB/s .* msg/s.*")), r.all());
        String row = Files.readAllLines(csv).stream().filter(l -> l.startsWith("ucx,8,")).findFirst().orElseThrow(
                () -> new AssertionError(r.all()));
        String[] cells = row.split(",", -1);
        assertTrue(Double.parseDouble(cells[6]) > 0, "the median ucx_perftest reported: " + row);
        assertTrue(cells[5].isEmpty() && cells[7].isEmpty(), "ucx_perftest reports no minimum or p99: " + row);
    }

    @Test
    void aPeerWhoseProgramIsMissingIsSkippedWithItsReasonAndTheOthersRun() throws Exception {
        // A PATH without compilers, mpirun or ucx_perftest: every C peer is skipped, host runs.
        Path empty = Files.createDirectories(dir.resolve("empty-path"));
        Finished r = PingPongLaunchTest.mprun(Map.of("PATH", empty.toString()), "-np", "2", "pingpong",
                "--mode", "host,ompi,ucx", "--sizes", "8", "--iters", "100", "--reps", "1", "--warmup", "0");
        assertEquals(0, r.status(), r.all());
        assertTrue(r.out().contains("floor: skipped: gcc is not on PATH"), r.all());
        assertTrue(r.out().contains("ompi: skipped: Open MPI's mpirun is not on PATH"), r.all());
        assertTrue(r.out().contains("ucx: skipped: UCX's ucx_perftest is not on PATH"), r.all());
        assertTrue(r.out().lines().anyMatch(l -> l.matches(".*host +8 +100 .*")), r.all());
    }
}
