package dev.gdasync.apps.collectives;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher end to end on rank processes: the four msccl-tools programs on 4 ranks (blocking, on streams, from
 * the KI executor) and the 2-rank examples are exact on every rank and fall back outside their counts; the built-ins
 * with reduce and broadcast on 3 ranks in the three models; a tiny benchmark writes its CSV (every collective, with
 * the sa and ki rows) and plots; the Open MPI and MPJ Express baselines run every collective beside the built-ins (or
 * are left out with the reason); a bad file and bad modes are refused with their message.
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
        String check = mprun(0, "-np", "2", "collectives", "--xml", EXAMPLES.toString(), "--threads",
                "--mode", "host");
        assertTrue(check.contains("ran MSCCL program 'allreduce_ring_2gpu': exact on all 2 ranks"), check);
        assertTrue(check.contains("ran MSCCL program 'alltoall_allpairs_2gpu': exact on all 2 ranks"), check);
        assertTrue(check.contains("[0] collectives: all results exact on every rank"), check);
        Path csv = dir.resolve("c.csv");
        Path png = dir.resolve("c.png");
        String bench = mprun(0, "-np", "2", "collectives", "--xml", EXAMPLES.toString(), "--bench", "--sizes", "64",
                "--iters", "2", "--warmup", "2", "--warmup-seconds", "0.2", "--reps", "1", "--no-mpj", "--csv", csv.toString(), "--plot", png.toString());
        assertTrue(bench.contains("every timed loop's check passed"), bench);
        // A timed warm-up goes on until every rank's JIT was quiet, or says it was not.
        assertTrue(bench.lines().anyMatch(l -> l.matches("\\[0] warm-up: [0-9.]+ s more after the timed warm-up until the JIT"
                + " was quiet .*") || l.matches("\\[0] warm-up: the JIT was still compiling [0-9.]+ s after .*")), bench);
        List<String> lines = Files.readAllLines(csv);
        assertEquals(BenchRow.CSV_HEADER, lines.getFirst());
        // The programs where one fits (allreduce, alltoall), the generated built-ins on streams and KI elsewhere,
        // the barrier only blocking.
        for (String start : List.of("allreduce,msccl,2,64,2,", "allreduce,msccl-sa,2,64,2,",
                "allreduce,msccl-ki,2,64,2,", "allreduce,built-in,2,64,2,", "alltoall,msccl,2,64,2,",
                "alltoall,msccl-sa,2,64,2,", "alltoall,msccl-ki,2,64,2,", "alltoall,built-in,2,64,2,",
                "allgather,built-in,2,64,2,", "allgather,allpairs-sa,2,64,2,", "allgather,allpairs-ki,2,64,2,",
                "bcast,built-in,2,64,2,", "bcast,tree-sa,2,64,2,", "bcast,tree-ki,2,64,2,",
                "barrier,built-in,2,0,2,")) {
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(start)), start + " in " + lines);
        }
        assertEquals(16, lines.size(), lines.toString());
        for (String coll : List.of("allreduce", "alltoall", "allgather", "bcast", "barrier")) {
            assertTrue(Files.size(dir.resolve("c-" + coll + ".png")) > 0, coll);
        }
    }

    /**
     * The baselines beside the built-ins: Open MPI (mode ompi) and MPJ Express each run every collective and their
     * checks, every row's line carries its ratio to Open MPI's, and the targets are judged. Where mpicc, mpirun or
     * MPJ Express are missing, that baseline is left out with its reason and the run still passes.
     */
    @Test
    void theBaselinesRunEveryCollectiveAndEveryRowHasItsRatioToOpenMpi() throws Exception {
        Path csv = dir.resolve("b.csv");
        String mpjHome = System.getenv("MPJ_HOME");
        boolean mpj = mpjHome != null && Files.isRegularFile(Path.of(mpjHome, "lib", "starter.jar"));
        boolean ompi = onPath("mpicc") && onPath("mpirun");
        String out = mprun(0, mpj ? Map.of("MPJ_HOME", mpjHome) : Map.of(), "-np", "2", "collectives", "--bench",
                "--mode", "host,ompi", "--sizes", "64", "--iters", "2", "--warmup", "2", "--warmup-seconds", "0", "--reps", "2", "--csv", csv.toString());
        assertTrue(out.contains("every timed loop's check passed"), out);
        List<String> lines = Files.readAllLines(csv);
        List<String> colls = List.of("allreduce,", "alltoall,", "allgather,", "bcast,", "barrier,");
        for (String coll : colls) {
            String bytes = coll.equals("barrier,") ? ",2,0,2," : ",2,64,2,";
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(coll + "built-in" + bytes)), coll + " in " + lines);
            if (ompi) {
                assertTrue(lines.stream().anyMatch(l -> l.startsWith(coll + "ompi" + bytes) && l.endsWith(",1.000")),
                        coll + " ompi in " + lines);
                assertTrue(lines.stream().anyMatch(l -> l.startsWith(coll + "built-in" + bytes)
                        && !l.endsWith(",")), coll + " built-in's ratio in " + lines);
            }
            if (mpj) {
                assertTrue(lines.stream().anyMatch(l -> l.startsWith(coll + "mpj" + bytes)), coll + " mpj in " + lines);
            }
        }
        if (ompi) {
            assertTrue(out.contains("[0] collectives: ompi: C MPI collectives (cpeers/ompi-coll.c) under Open MPI"), out);
            assertTrue(out.contains("[0] collectives: targets (issue 30), 2 ranks: <= 2x Open MPI's median"), out);
            assertEquals(5, out.lines().filter(l -> l.matches("\\[0] collectives: {3}\\w+ +built-in +<= 2x ompi: .*"))
                    .count(), out);
            assertTrue(out.lines().anyMatch(l -> l.matches("\\[0] barrier +built-in +2 +0 +2 +[0-9.]+ +- +[0-9.]+")),
                    out);
        } else {
            System.out.println("CollectivesAppTest: the Open MPI baseline is not run here: mpicc or mpirun is not on"
                    + " PATH (on Debian: apt-get install openmpi-bin libopenmpi-dev)");
            assertTrue(out.contains("[0] collectives: the Open MPI baseline is left out: "), out);
        }
        if (!mpj) {
            System.out.println("CollectivesAppTest: MPJ Express is not run here: MPJ_HOME has no lib/starter.jar");
        }
    }

    @Test
    void anOpenMpiThatCannotBuildIsLeftOutWithItsReason() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path mpicc = Files.writeString(bin.resolve("mpicc"), "#!/bin/sh\necho 'no compiler here' >&2\nexit 1\n");
        assertTrue(mpicc.toFile().setExecutable(true));
        String out = mprun(0, Map.of("PATH", bin + File.pathSeparator + System.getenv("PATH")), "-np", "2",
                "collectives", "--bench", "--mode", "host,ompi", "--no-mpj", "--sizes", "8", "--iters", "1", "--warmup", "1", "--warmup-seconds", "0", "--reps",
                "1");
        assertTrue(out.contains("[0] collectives: the Open MPI baseline is left out: "), out);
        assertTrue(out.contains("every timed loop's check passed"), out);
        assertTrue(out.contains("(not judged: no ompi rows)"), out);
    }

    @Test
    void modesAreCheckedWithOneLine() throws Exception {
        String bad = mprun(2, "-np", "2", "collectives", "--bench", "--mode", "host,mpi");
        assertTrue(bad.contains("collectives: --mode: unknown mode 'mpi' (host, sa, ki, or ompi with --bench)"), bad);
        String twice = mprun(2, "-np", "2", "collectives", "--bench", "--mode", "host,host");
        assertTrue(twice.contains("collectives: --mode: host is given twice"), twice);
        String check = mprun(2, "-np", "2", "collectives", "--mode", "host,ompi");
        assertTrue(check.contains("collectives: --mode ompi is the benchmark's Open MPI baseline: add --bench"), check);
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

    private static boolean onPath(String program) {
        return Arrays.stream(System.getenv("PATH").split(File.pathSeparator))
                .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, program)));
    }

    private static String mprun(int status, String... args) {
        return mprun(status, Map.of(), args);
    }

    /** @return the launcher's output, stderr merged in, once it exited with {@code status} (within 300 s) */
    private static String mprun(int status, Map<String, String> env, String... args) {
        List<String> a = new ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1"));
        a.addAll(List.of(args));
        ChildProcess.Finished run = Launcher.mprun(a).removeEnvironment(k -> k.equals("MPJ_HOME")).environment(env)
                .mergeStderr().run(Duration.ofSeconds(300));
        assertEquals(status, run.status(), run.out());
        return run.out();
    }
}
