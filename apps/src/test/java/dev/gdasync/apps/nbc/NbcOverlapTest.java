package dev.gdasync.apps.nbc;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The report, and the app end to end under {@code mprun --proxies} with 2 rank processes and the proxy. */
@Timeout(300)
class NbcOverlapTest {
    @TempDir
    Path dir;

    @Test
    void theTableAndTheCsvCarryOsusColumnsAndFormula() {
        OverlapRow host = new OverlapRow("ialltoall", "host", 4096, 4, 10, 12, 10, 0.5, 10);
        OverlapRow off = new OverlapRow("ialltoall", "offload", 4096, 4, 10, 9, 10, 0, 10);
        assertEquals(75.0, host.overlap(), 1e-9);
        assertEquals(100.0, off.overlap(), 1e-9);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        OverlapReport.header("ialltoall", 4, List.of("host", "offload"), out);
        OverlapReport.line(List.of(host, off), out);
        String table = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(table.contains("Overall(us) Compute(us)  Pure Comm.(us) Overlap(%)"), table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("4096 ") && l.contains("75.00") && l.contains("100.00")), table);
        String csv = OverlapReport.csv(List.of(host, off));
        assertTrue(csv.startsWith(OverlapReport.CSV_HEADER + "\n"), csv);
        assertTrue(csv.contains("ialltoall,host,4,4096,10,12.000,10.000,0.500,10.000,75.00\n"), csv);
    }

    @Test
    void anIdleComputeCallsNothingAndStillGivesEveryRow() throws Exception {
        ChildProcess.Finished run = Launcher.mprun("--jvm-opt", "-XX:TieredStopAtLevel=1", "-np", "2", "--proxies",
                "nbc-overlap", "--compute", "idle", "--coll", "ialltoall,iallgather", "--sizes", "70000", "--iters", "3",
                "--warmup", "1", "--warmup-iters", "2").mergeStderr().run(Duration.ofSeconds(240));
        String out = run.out();
        assertEquals(0, run.status(), out);
        assertTrue(out.contains("[0] # Compute: idle, one sleep as long as the pure time and no test call"), out);
        for (String coll : List.of("alltoall", "allgather")) {
            assertTrue(out.contains("[0] # OSU MPI-style Non-blocking " + coll + " Latency Test, 2 ranks"), out);
        }
        // The proxy filled receive buffers on the shared-memory path while the ranks slept.
        assertTrue(out.lines().anyMatch(l -> l.startsWith("[proxy] host 0: ") && !l.contains(" 0 shared-memory buffers")),
                out);
    }

    @Test
    void twoRanksAndTheProxyMeasureEveryCollectiveOnBothEngines() throws Exception {
        Path csv = dir.resolve("nbc.csv");
        Path png = dir.resolve("nbc.png");
        ChildProcess.Finished run = Launcher.mprun("--jvm-opt", "-XX:TieredStopAtLevel=1", "-np", "2", "--proxies",
                "nbc-overlap", "--sizes", "64,9000", "--iters", "3", "--large-iters", "1", "--warmup", "1", "--warmup-iters",
                "2", "--csv", csv.toString(), "--plot", png.toString()).mergeStderr().run(Duration.ofSeconds(240));
        String out = run.out();
        assertEquals(0, run.status(), out);
        for (String coll : NbcOverlap.COLLECTIVES) {
            assertTrue(out.contains("[0] # OSU MPI-style Non-blocking " + coll.substring(1) + " Latency Test, 2 ranks"), out);
        }
        List<String> rows = Files.readAllLines(csv);
        assertEquals(1 + 3 * 2 * 2, rows.size(), String.join("\n", rows));
        for (String coll : NbcOverlap.COLLECTIVES) {
            for (String engine : NbcOverlap.ENGINES) {
                assertTrue(rows.stream().anyMatch(l -> l.startsWith(coll + "," + engine + ",2,9000,")), coll + " " + engine);
            }
        }
        assertTrue(Files.size(png) > 0);
    }
}
