package dev.gdasync.apps.collectives;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmark's plan and report without processes: the cases every library runs, the child jobs' result lines, the
 * ratio to Open MPI on every line and in the CSV, the targets' verdicts, one plot per collective.
 */
class BenchReportTest {
    @TempDir
    Path dir;

    @Test
    void thePlanHasEveryCollectiveAtEverySizeThatGivesEachRankAnInt() {
        List<BenchCase> four = BenchCase.plan(List.of(8L, 64L, 64L << 20), 50, 20_000, 4);
        assertEquals(List.of("allreduce:8:50:20000", "allreduce:64:50:20000", "allreduce:67108864:2:2",
                "alltoall:64:50:20000", "alltoall:67108864:2:2", "allgather:8:50:20000", "allgather:64:50:20000",
                "allgather:67108864:2:2", "bcast:8:50:20000", "bcast:64:50:20000", "bcast:67108864:2:2",
                "barrier:0:50:20000"), four.stream().map(BenchCase::arg).toList());
        assertEquals(four, four.stream().map(c -> BenchCase.parse(c.arg())).toList());
        // The warm-up shrinks with the size (64 MiB moved at most) but never below a timed rep.
        assertEquals(List.of("allreduce:1048576:50:64", "allreduce:16777216:4:4"),
                BenchCase.plan(List.of(1L << 20, 16L << 20), 50, 20_000, 2).stream()
                        .filter(c -> c.collective() == BenchCollective.ALLREDUCE).map(BenchCase::arg).toList());
        assertEquals(2, BenchCase.plan(List.of(8L), 50, 20_000, 2).stream()
                .filter(c -> c.collective() == BenchCollective.ALLTOALL || c.collective() == BenchCollective.BARRIER)
                .count());
        assertThrows(IllegalArgumentException.class, () -> BenchCase.parse("allreduce:8:50"));
        assertThrows(IllegalArgumentException.class, () -> BenchCase.parse("reduce:8:50:50"));
    }

    @Test
    void aChildsResultLineIsARowWithItsReps() {
        BenchCase c = new BenchCase(BenchCollective.BCAST, 4096, 50, 50);
        BenchRow r = BenchRow.fromChild("ompi", 2, BenchRow.childLine(c, new double[] {3.0, 1.0, 2.0}));
        assertEquals("bcast", r.collective());
        assertEquals(4096, r.bytes());
        assertEquals(50, r.iters());
        assertEquals(2.0, r.medianMicros());
        assertTrue(r.csv().startsWith("bcast,ompi,2,4096,50,2.000,1.000,3.000,"), r.csv());
        assertThrows(IllegalArgumentException.class, () -> BenchRow.fromChild("ompi", 2, "bcast 8"));
    }

    @Test
    void everyLineHasItsRatioToOpenMpiAndTheTargetsAreJudged() throws Exception {
        List<BenchRow> rows = new ArrayList<>();
        // allreduce: within 2x Open MPI and below MPJ at both sizes; bcast: 3x Open MPI at 64 B, above MPJ at 8 B.
        rows.add(row("allreduce", "built-in", 8, 1.5));
        rows.add(row("allreduce", "built-in", 64, 2.0));
        rows.add(row("bcast", "built-in", 8, 2.0));
        rows.add(row("bcast", "built-in", 64, 3.0));
        rows.add(row("barrier", "built-in", 0, 4.0));
        for (String coll : List.of("allreduce", "bcast")) {
            for (long bytes : new long[] {8, 64}) {
                rows.add(row(coll, "ompi", bytes, 1.0));
                rows.add(row(coll, "mpj", bytes, coll.equals("bcast") && bytes == 8 ? 1.5 : 10.0));
            }
        }
        rows.add(row("barrier", "ompi", 0, 0.5));
        Path csv = dir.resolve("r.csv");
        Path png = dir.resolve("r.png");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        BenchReport.write(rows, csv, png, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.lines().anyMatch(l -> l.matches("allreduce +built-in +2 +8 +10 +1\\.50 +5\\.33 +1\\.50")), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("barrier +built-in +2 +0 +10 +4\\.00 +- +8\\.00")), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("barrier +ompi +2 +0 +10 +0\\.50 +- +1\\.00")), out);
        assertTrue(out.contains("collectives: targets (issue 30), 2 ranks: <= 2x Open MPI's median at every size;"
                + " below MPJ Express's at every size\n"), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("collectives: {3}allreduce +built-in +<= 2x ompi: met \\(2 of 2"
                + " sizes; worst 2\\.00x ompi at 64 B\\) +below mpj: met \\(2 of 2 sizes; worst 0\\.20x mpj at 64 B\\)")),
                out);
        assertTrue(out.lines().anyMatch(l -> l.matches("collectives: {3}bcast +built-in +<= 2x ompi: MISSED at 1 of 2"
                + " sizes \\(worst 3\\.00x ompi at 64 B\\) +below mpj: MISSED at 1 of 2 sizes \\(worst 1\\.33x mpj at"
                + " 8 B\\)")), out);
        assertTrue(out.lines().anyMatch(l -> l.matches("collectives: {3}barrier +built-in +<= 2x ompi: MISSED at 1 of 1"
                + " sizes \\(worst 8\\.00x ompi\\) +below mpj: not judged")), out);
        assertTrue(out.contains("collectives: targets met (both) by 1 of 3 gdasync methods' collectives"), out);
        List<String> lines = Files.readAllLines(csv);
        assertEquals(BenchRow.CSV_HEADER, lines.getFirst());
        assertEquals("allreduce,built-in,2,8,10,1.500,1.500,1.500,5.33,1.500", lines.get(1));
        assertTrue(lines.contains("bcast,mpj,2,8,10,1.500,1.500,1.500,5.33,1.500"), lines.toString());
        for (String coll : List.of("allreduce", "bcast", "barrier")) {
            assertTrue(Files.size(dir.resolve("r-" + coll + ".png")) > 0, coll);
        }
        assertTrue(Files.notExists(dir.resolve("r-alltoall.png")), "no rows, no plot");
    }

    @Test
    void otherRankCountsHaveNoTargets() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        BenchTargets.print(List.of(new BenchRow("barrier", "built-in", 3, 0, 10, new double[] {1})),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertEquals("collectives: issue 30 sets targets for 2 and 4 ranks, not 3\n",
                bytes.toString(StandardCharsets.UTF_8));
    }

    private static BenchRow row(String coll, String method, long bytes, double micros) {
        return new BenchRow(coll, method, 2, bytes, 10, new double[] {micros});
    }
}
