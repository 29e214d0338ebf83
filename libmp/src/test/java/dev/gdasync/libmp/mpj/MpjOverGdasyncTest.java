package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import dev.gdasync.libmp.testutil.MpjPrograms;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MPJ Express programs (mpiJava 1.2 API only) over gdasync, started by the launcher with {@code --mpj} as real JVMs:
 * every conformance case of {@link MpjConformanceMain} on 4 ranks in one job (point-to-point with wildcards and order,
 * probes, synchronous and buffered sends, Waitany/Waitsome/Testall, persistent requests, Sendrecv, collectives,
 * Split/Dup/Create, intercommunicators, Cartesian and graph topologies, derived datatypes, objects, self-sends,
 * cancelled receives, bad arguments); and a rank killed while the others are blocked in MPJ calls. Without MPJ
 * Express the tests are skipped with the reason.
 */
@Timeout(180)
public class MpjOverGdasyncTest {
    public static final Duration WAIT = Duration.ofSeconds(120);

    /** Every case of {@link MpjConformanceMain}. */
    public static final List<String> CASES = List.of("ring", "large", "wildcards", "order", "probe", "ssend", "waitany",
            "persistent", "sendrecv", "collectives", "communicators", "intercomm", "topologies", "datatypes", "objects",
            "self", "vcollectives", "testany", "groups", "cartsub", "merge", "iprobeall", "rendezvous", "manylarge", "heldlarge",
            "largetrunc", "cancel", "blocking", "badargs");

    static Map<String, String> mpjEnv() {
        return MpjPrograms.mpjEnvOrSkip("MpjOverGdasyncTest");
    }

    @Test
    void everyConformanceCaseOnFourRanks() {
        Map<String, String> env = mpjEnv();
        int ranks = 4;
        try (ChildProcess mprun = MpRunProcess.start(env, "-np", String.valueOf(ranks), "--mpj",
                MpjConformanceMain.class.getName())) {
            int status = mprun.awaitExit(WAIT);
            List<String> problems = MpjPrograms.conformanceProblems(mprun, ranks, CASES);
            assertTrue(problems.isEmpty(), String.join("\n", problems) + "\n" + mprun.describe());
            assertEquals(0, status, mprun.describe());
            for (int r = 0; r < 2; r++) {
                String prefix = "[" + r + "] truncation: ";
                String line = mprun.stdout().stream().filter(l -> l.startsWith(prefix)).findFirst().orElse("");
                assertTrue(line.contains("message truncated (MPI_ERR_TRUNCATE): RECEIVE from rank " + (1 - r) + " tag 14 "
                        + "context ") && line.contains(" matched a message of 40 bytes from rank " + (1 - r) + " tag 14"),
                        "rank " + r + " says what was truncated: " + line);
                String big = "[" + r + "] large truncation: ";
                String bigLine = mprun.stdout().stream().filter(l -> l.startsWith(big)).findFirst().orElse("");
                assertTrue(bigLine.contains("message truncated (MPI_ERR_TRUNCATE): RECEIVE from rank " + (1 - r)
                        + " tag 2100 ") && bigLine.contains("larger than the receive buffer's"),
                        "rank " + r + " says what was truncated (a rendezvous-sized message): " + bigLine);
            }
        }
    }

    /**
     * The point-to-point cases under other settings, on 2 ranks: 2 slots and no rendezvous (every message through the
     * slots, the senders held back by credits all the time); a switch at 1 KiB with a rendezvous area of 256 KiB that
     * never grows (most large messages find it full and go through the slots, or are copied into it); and the same area
     * allowed to grow by 1 MiB (large messages spread over its extents of 256 KiB, read in place, until they too are
     * full).
     */
    @Test
    void thePointToPointCasesPassWithFewCreditsAndWithASmallRendezvousArea() {
        Map<String, String> env = mpjEnv();
        List<String> cases = List.of("ring", "large", "order", "ssend", "rendezvous", "manylarge", "heldlarge",
                "largetrunc", "cancel", "blocking");
        for (List<String> settings : List.of(
                List.of("-D" + GdasyncDevice.SLOTS_PROPERTY + "=2", "-D" + GdasyncDevice.RENDEZVOUS_POOL_PROPERTY + "=0"),
                List.of("-D" + GdasyncDevice.RENDEZVOUS_BYTES_PROPERTY + "=1024",
                        "-D" + GdasyncDevice.RENDEZVOUS_POOL_PROPERTY + "=262144",
                        "-D" + GdasyncDevice.RENDEZVOUS_GROW_PROPERTY + "=0"),
                List.of("-D" + GdasyncDevice.RENDEZVOUS_BYTES_PROPERTY + "=1024",
                        "-D" + GdasyncDevice.RENDEZVOUS_POOL_PROPERTY + "=262144",
                        "-D" + GdasyncDevice.RENDEZVOUS_GROW_PROPERTY + "=1048576"))) {
            List<String> a = new ArrayList<>();
            for (String d : settings) {
                a.addAll(List.of("--jvm-opt", d));
            }
            a.addAll(List.of("-np", "2", "--mpj", MpjConformanceMain.class.getName()));
            a.addAll(cases);
            try (ChildProcess mprun = MpRunProcess.start(env, a.toArray(String[]::new))) {
                int status = mprun.awaitExit(WAIT);
                List<String> problems = MpjPrograms.conformanceProblems(mprun, 2, cases);
                assertTrue(problems.isEmpty(), settings + ":\n" + String.join("\n", problems) + "\n" + mprun.describe());
                assertEquals(0, status, settings + ": " + mprun.describe());
            }
        }
    }

    /** The conformance program is MPI-correct: every case passes on MPJ Express's own multicore device too. */
    @Test
    void theConformanceProgramPassesOnMpjsOwnMulticoreDevice() {
        Path home = Path.of(mpjEnv().get("MPJ_HOME"));
        String cp = System.getProperty("java.class.path");
        String javaBin = Path.of(ChildProcess.java()).getParent().toString();
        // MPJ's multicore device fails the sender of a message larger than the receive (an exception from its isend)
        // instead of the receive, as MPI says; and its cancel never cancels (it answers false; the case counts on an
        // unmatched receive being cancelled): those two cases are not run there.
        List<String> cases = CASES.stream().filter(c -> !c.equals("largetrunc") && !c.equals("cancel")).toList();
        System.out.println("MpjOverGdasyncTest: case largetrunc not run on MPJ's multicore device (its isend fails on a "
                + "message larger than the receive)");
        System.out.println("MpjOverGdasyncTest: case cancel not run on MPJ's multicore device (its Request.cancel "
                + "answers false: no receive is ever cancelled)");
        List<String> cmd = new ArrayList<>(List.of(ChildProcess.java(), "-jar", home.resolve("lib/starter.jar").toString(),
                "-np", "4", "-dev", "multicore", "-cp", cp, MpjConformanceMain.class.getName()));
        cmd.addAll(cases);
        try (ChildProcess mpj = ChildProcess.start("mpjrun", cmd, Map.of("MPJ_HOME", home.toString(),
                "PATH", javaBin + java.io.File.pathSeparator + System.getenv("PATH")))) {
            mpj.awaitExit(WAIT); // MPJ's starter exits with 0 even when a rank fails: the output is what counts
            for (String c : cases) {
                long ok = mpj.stdout().stream().filter(l -> l.equals("OK " + c)).count();
                assertEquals(4, ok, "case " + c + " on MPJ's multicore device: " + mpj.describe());
            }
        }
    }

    /**
     * On the Mp that carries MPJ's messages, libmp's own calls run beside MPJ's, in one process over the same NIC and
     * connections: two-sided isend/irecv with MPJ's Sendrecv in flight, isendOnStream/waitOnStream on host streams,
     * the collectives of coll alternating with MPJ's Allreduce, a global array's messages and its one-sided calls. The
     * device puts its fragments one-sided and posts no receives, so none of them takes the program's messages.
     */
    @Test
    void libmpLayersRunOnMpjsMpBesideMpjsMessages() {
        int ranks = 3;
        try (ChildProcess mprun = MpRunProcess.start(mpjEnv(), "-np", String.valueOf(ranks), "--mpj",
                MpjBesideLibmpMain.class.getName())) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int rank = 0; rank < ranks; rank++) {
                String p = "[" + rank + "] ";
                List<String> lines = mprun.stdout().stream().filter(l -> l.startsWith(p)).map(l -> l.substring(p.length()))
                        .toList();
                assertTrue(lines.stream().noneMatch(l -> l.startsWith("FAIL")), mprun.describe());
                assertEquals(List.of("LIBMP OK", "STREAM OK", "GATED OK", "GATED-READ OK", "COLL OK", "GA-MSG OK", "GA OK", "MPJ OK"), lines,
                        mprun.describe());
            }
        }
    }

    /**
     * MPI.Init again after MPI.Finalize, ten rounds in one process (MPJ allows it; its own test suite does it), each
     * with messages that arrive while the receiver is between rounds: over gdasync on 3 ranks, and on MPJ's multicore
     * device (the program is MPJ-correct there too). The ranks then leave the job and exit with 0.
     */
    @Test
    void mpiInitAgainAfterFinalizeWorksAsOnMpjsOwnDevice() {
        Map<String, String> env = mpjEnv();
        int ranks = 3;
        try (ChildProcess mprun = MpRunProcess.start(env, "-np", String.valueOf(ranks), "--mpj",
                MpjReinitMain.class.getName())) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int r = 0; r < ranks; r++) {
                for (int round = 0; round < 10; round++) {
                    assertTrue(mprun.stdout().contains("[" + r + "] OK round " + round), "rank " + r + " round " + round
                            + ": " + mprun.describe());
                }
                assertTrue(mprun.stdout().contains("[" + r + "] DONE rank " + r + " of " + ranks), mprun.describe());
            }
        }
        Path home = Path.of(env.get("MPJ_HOME"));
        String javaBin = Path.of(ChildProcess.java()).getParent().toString();
        List<String> cmd = List.of(ChildProcess.java(), "-jar", home.resolve("lib/starter.jar").toString(), "-np",
                String.valueOf(ranks), "-dev", "multicore", "-cp", System.getProperty("java.class.path"),
                MpjReinitMain.class.getName());
        try (ChildProcess mpj = ChildProcess.start("mpjrun", cmd, Map.of("MPJ_HOME", home.toString(),
                "PATH", javaBin + java.io.File.pathSeparator + System.getenv("PATH")))) {
            mpj.awaitExit(WAIT);
            assertEquals(ranks, mpj.stdout().stream().filter(l -> l.equals("OK round 9")).count(), mpj.describe());
        }
    }

    @Test
    void aKilledRankFailsThePendingAndLaterCallsOfTheOthersNamingIt() throws Exception {
        killRankOne("recv", "barrier");
    }

    /**
     * Rank 1 killed mid-rendezvous: rank 0 waits in a synchronous send of 1 MiB for rank 1 to read it, and rank 2 holds
     * rank 1's announcement of a 1 MiB message whose bytes were in rank 1's memory; both fail naming rank 1, and rank
     * 2's later receive of that message fails too instead of reading it.
     */
    @Test
    void aRankKilledMidRendezvousFailsTheSenderWaitingForItAndTheReceiverOfItsMessage() throws Exception {
        killRankOne("ssend", "recv", "rendezvous");
    }

    private static void killRankOne(String call0, String call2, String... programArgs) throws Exception {
        Map<String, String> env = mpjEnv();
        List<String> a = new ArrayList<>(List.of("-np", "3", "--grace", "20", "--mpj", MpjVictimMain.class.getName()));
        a.addAll(List.of(programArgs));
        try (ChildProcess mprun = MpRunProcess.start(env, a.toArray(String[]::new))) {
            List<Long> pids = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                int rank = r;
                String line = mprun.awaitLine(l -> l.startsWith("[" + rank + "] ready "), WAIT);
                pids.add(Long.parseLong(line.substring(line.lastIndexOf(' ') + 1)));
            }
            Thread.sleep(300); // the survivors go from their "ready" line into their calls
            long killedAt = System.nanoTime();
            assertTrue(ProcessHandle.of(pids.get(1)).orElseThrow().destroyForcibly());
            for (int r : new int[] {0, 2}) {
                String call = r == 0 ? call0 : call2;
                String prefix = "[" + r + "] FAILED " + call + " ";
                int rank = r;
                String line = mprun.awaitLine(l -> l.startsWith(prefix) || l.startsWith("[" + rank + "] RETURNED"), WAIT);
                assertTrue(line.startsWith(prefix), "rank " + r + "'s " + call + " must fail: " + mprun.describe());
                String[] parts = line.substring(prefix.length()).split(" ", 2);
                long ms = (Long.parseLong(parts[0]) - killedAt) / 1_000_000;
                System.out.println("MpjOverGdasyncTest: rank " + r + "'s " + call + " failed " + ms + " ms after the kill: "
                        + parts[1]);
                assertTrue(parts[1].contains("rank 1") && parts[1].contains("XDevException"),
                        "the error names the killed rank: " + line);
                assertTrue(parts[1].contains("rank 1's process is gone") || parts[1].contains("the peer's process is gone"),
                        "the error says the rank's process is gone: " + line);
                assertTrue(ms < dev.gdasync.libmp.testutil.KilledMidCall.BOUND_MS, "failed promptly, not by a timeout: " + ms
                        + " ms");
                String later = mprun.awaitLine(l -> l.startsWith("[" + rank + "] LATER-"), WAIT);
                assertTrue(later.startsWith("[" + r + "] LATER-FAILED ") && later.contains("rank 1"),
                        "a later call fails too, naming the killed rank: " + later);
            }
            assertTrue(mprun.awaitExit(WAIT) != 0, mprun.describe());
        }
    }

    @Test
    void mpjAndLibmpCallsShareTheNicInOneProgramAsTheGuideShowsIt() throws Exception {
        runGuideExample(demo.mpj.MpjAndLibmp.class, "libmp isendOnStream");
    }

    /**
     * Runs one of the guide's MPJ ring examples on 3 ranks, checks that every rank printed the number its left
     * neighbour sent by MPJ and by the second route, and that docs/getting-started.md shows the file as it is.
     *
     * @param example the example's main class (its source is libmp/src/test/java/demo/mpj/NAME.java)
     * @param route   how its second exchange is labelled in its output, e.g. {@code libmp isendOnStream}
     */
    static void runGuideExample(Class<?> example, String route) throws Exception {
        Map<String, String> env = mpjEnv();
        int ranks = 3;
        try (ChildProcess mprun = MpRunProcess.start(env, "-np", String.valueOf(ranks), "--mpj", example.getName())) {
            assertEquals(0, mprun.awaitExit(WAIT), mprun.describe());
            for (int r = 0; r < ranks; r++) {
                int prev = (r + ranks - 1) % ranks;
                for (String line : List.of("[" + r + "] rank " + r + " (MPJ): got " + (100 + prev) + " from rank " + prev,
                        "[" + r + "] rank " + r + " (" + route + "): got " + (200 + prev) + " from rank " + prev)) {
                    assertTrue(mprun.stdout().contains(line), "missing '" + line + "': " + mprun.describe());
                }
            }
        }
        // The guide shows the program as it is compiled and run here.
        String source = "libmp/src/test/java/demo/mpj/" + example.getSimpleName() + ".java";
        Path root = Path.of("").toAbsolutePath().getParent();
        String guide = Files.readString(root.resolve("docs/getting-started.md"));
        String file = Files.readString(root.resolve(source));
        assertTrue(guide.contains("```java\n" + file + "```\n"), "docs/getting-started.md shows " + source + " as it is");
    }

    @Test
    void aRankThatAbortsFailsTheOthersCallsNamingItAndTheReason() {
        Map<String, String> env = mpjEnv();
        try (ChildProcess mprun = MpRunProcess.start(env, "-np", "3", "--grace", "1", "--mpj",
                MpjVictimMain.class.getName(), "abort")) {
            for (int r : new int[] {0, 2}) {
                String call = r == 0 ? "recv" : "barrier";
                int rank = r;
                String line = mprun.awaitLine(l -> l.startsWith("[" + rank + "] FAILED " + call + " ")
                        || l.startsWith("[" + rank + "] RETURNED"), WAIT);
                assertTrue(line.contains("FAILED") && line.contains("rank 1 aborted the job: the victim gives up"),
                        "rank " + r + "'s " + call + " fails naming the rank that aborted and why: " + line);
                String later = mprun.awaitLine(l -> l.startsWith("[" + rank + "] LATER-"), WAIT);
                assertTrue(later.startsWith("[" + r + "] LATER-FAILED ") && later.contains("rank 1 aborted"), later);
            }
            assertTrue(mprun.awaitExit(WAIT) != 0, mprun.describe());
        }
    }
}
