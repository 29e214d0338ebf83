package dev.gdasync.apps.collectives;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher end to end on rank processes: the four msccl-tools programs on 4 ranks (blocking, on streams, from
 * the KI executor) and the 2-rank examples are exact on every rank and fall back outside their counts; the built-ins
 * with reduce and broadcast on 3 ranks in the three models; a tiny benchmark writes its CSV (with the ki rows) and
 * plot; a bad file is refused with its message.
 */
@Timeout(400)
class CollectivesAppTest {
    private static final Path REFERENCE = Path.of("../libmp/src/test/resources/msccl/reference");
    private static final Path EXAMPLES = Path.of("../docs/examples/msccl");

    @TempDir
    Path dir;

    @Test
    void everyShippedProgramIsExactOnEveryRankAndFallsBackOutsideItsCounts() throws Exception {
        String out = mprun(0, "-np", "4", "collectives", "--xml", REFERENCE.toString());
        assertTrue(out.contains("[0] collectives: 4 program(s) loaded, 4 ranks"), out);
        assertTrue(out.contains("[0] collectives: model host (blocking)"), out);
        assertTrue(out.contains("[0] collectives: model sa (enqueued on a host stream)"), out);
        assertTrue(out.contains("[0] collectives: model ki (run by the blocks of the host KI executor)"), out);
        // Three counts per program and model (host, sa, ki).
        for (String name : List.of("allreduce_ring_inplace", "allreduce_recursive_doubling_halving",
                "allgather_ring_1channelsperring", "alltoall_allpairs")) {
            assertEquals(9, out.lines().filter(l -> l.contains("[" + name + "]")
                    && l.contains("ran MSCCL program '" + name + "': exact on all 4 ranks")).count(), out);
        }
        assertEquals(6, out.lines().filter(l -> l.contains("ran the built-in algorithm (outside the program's counts):"
                + " exact on all 4 ranks")).count(), out);
        assertEquals(3, out.lines().filter(l -> l.equals("[0] collectives: all results exact on every rank")).count(),
                out);
    }

    @Test
    void twoRanksRunTheExamplesAndATinyBenchmark() throws Exception {
        String check = mprun(0, "-np", "2", "collectives", "--xml", EXAMPLES.toString(), "--inline",
                "--mode", "host");
        assertTrue(check.contains("ran MSCCL program 'allreduce_ring_2gpu': exact on all 2 ranks"), check);
        assertTrue(check.contains("ran MSCCL program 'alltoall_allpairs_2gpu': exact on all 2 ranks"), check);
        assertTrue(check.contains("[0] collectives: all results exact on every rank"), check);
        Path csv = dir.resolve("c.csv");
        Path png = dir.resolve("c.png");
        String bench = mprun(0, "-np", "2", "collectives", "--xml", EXAMPLES.toString(), "--bench", "--sizes", "64",
                "--iters", "2", "--reps", "1", "--no-mpj", "--csv", csv.toString(), "--plot", png.toString());
        assertTrue(bench.contains("every timed loop's check passed"), bench);
        List<String> lines = Files.readAllLines(csv);
        assertEquals(BenchRow.CSV_HEADER, lines.getFirst());
        for (String start : List.of("allreduce,msccl,2,64,2,", "allreduce,msccl-sa,2,64,2,",
                "allreduce,msccl-ki,2,64,2,", "allreduce,built-in,2,64,2,", "alltoall,msccl,2,64,2,",
                "alltoall,msccl-sa,2,64,2,", "alltoall,msccl-ki,2,64,2,", "alltoall,built-in,2,64,2,")) {
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(start)), start + " in " + lines);
        }
        assertTrue(Files.size(dir.resolve("c-allreduce.png")) > 0);
        assertTrue(Files.size(dir.resolve("c-alltoall.png")) > 0);
    }

    @Test
    void threeRanksRunTheBuiltInsWithReduceAndBroadcastInEveryModel() throws Exception {
        String out = mprun(0, "-np", "3", "collectives", "--mode", "host,sa,ki");
        for (String model : List.of("host", "sa", "ki")) {
            assertTrue(out.contains("[0] collectives: model " + model), out);
        }
        assertEquals(3, out.lines().filter(l -> l.contains("reduce to rank 2 of 1001 int32: ran the built-in tree: "
                + "exact on all 3 ranks")).count(), out);
        assertEquals(3, out.lines().filter(l -> l.contains("broadcast from rank 2 of 1001 int32: ran the built-in "
                + "tree: exact on all 3 ranks")).count(), out);
        assertEquals(12, out.lines().filter(l -> l.contains("ran the built-in algorithm: exact on all 3 ranks"))
                .count(), out);
        assertEquals(3, out.lines().filter(l -> l.equals("[0] collectives: all results exact on every rank")).count(),
                out);
    }

    @Test
    void aBadProgramIsRefusedWithItsMessage() throws Exception {
        Path bad = Files.writeString(dir.resolve("bad.xml"), Files.readString(EXAMPLES.resolve("allreduce_ring_2gpu.xml"))
                .replace("type=\"rrcs\"", "type=\"rrx\""));
        String out = mprun(2, "-np", "2", "collectives", "--xml", bad.toString());
        assertTrue(out.contains("collectives: " + bad + ":5: gpu 0 tb 0 step 1: type='rrx' is not one of"), out);
    }

    private static String mprun(int status, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                "dev.gdasync.libmp.launch.MpRun", "--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().keySet().removeIf(k -> k.startsWith("GDASYNC_") || k.equals("MPJ_HOME"));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS));
        assertEquals(status, p.exitValue(), out);
        return out;
    }
}
