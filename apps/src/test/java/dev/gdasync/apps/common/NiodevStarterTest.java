package dev.gdasync.apps.common;

import dev.gdasync.apps.testutil.Launcher;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link NiodevStarter}: the ranks' command lines, the rendezvous with stand-in ranks, and, where MPJ Express is set
 * up, MpjPingPong and MpjCollBench on real niodev processes and a rank killed in the middle of a run.
 */
class NiodevStarterTest {
    private static final String PINGPONG = "dev.gdasync.apps.pingpong.MpjPingPong";
    private static final String PP_RESULT = "MPJ-PINGPONG-RESULT";
    private static final String PP_ERROR = "MPJ-PINGPONG-ERROR";

    @Test
    void eachRankRunsWhatMpjsDaemonRuns() {
        assertEquals("#temp|line;#Number|of|Processes;2;#Protocol|Switch|Limit;131072;", NiodevStarter.portInfo(2));
        assertEquals(List.of("/jdk/bin/java", "-cp", "/mpj/lib/mpj.jar:/mpj/lib/daemon.jar:app.jar",
                        "runtime.daemon.Wrapper", NiodevStarter.portInfo(2), "2", "niodev", "127.0.0.1", "41000", "1",
                        "x.Main", "a", "b"),
                NiodevStarter.rankCommand("/jdk/bin/java", "/mpj", "app.jar", 2, "127.0.0.1", 41000, 1, "x.Main",
                        List.of("a", "b")));
    }

    @Test
    void theCommandLineIsRead() throws Exception {
        NiodevStarter.Options o = NiodevStarter.parse(new String[]{"-np", "3", "--error-tag", "E", "--meet-timeout",
                "5", "x.Main", "--sizes", "8"});
        assertEquals(new NiodevStarter.Options(3, "E", 5, NiodevStarter.JOB_TIMEOUT_SECONDS, "x.Main",
                List.of("--sizes", "8")), o);
        assertEquals("-np takes a positive number, not '0'", parseError("-np", "0", "x.Main"));
        assertEquals("-np N is missing", parseError("x.Main"));
        assertEquals("the MPJ program's main class is missing", parseError("-np", "2"));
        assertEquals("unknown option --ranks", parseError("--ranks", "2", "x.Main"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, NiodevStarter.run(new String[]{"x.Main"}, "/nowhere", System.out, new PrintStream(err, true)));
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("niodev: -np N is missing"), err.toString());
    }

    @Test
    void withoutMpjExpressTheJobSaysWhy() throws Exception {
        assertEquals("MPJ_HOME=/nowhere has no lib/mpj.jar", NiodevStarter.missing("/nowhere"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(1, NiodevStarter.run(new String[]{"-np", "2", "--error-tag", "E", "x.Main"}, "/nowhere", System.out,
                new PrintStream(err, true)));
        assertEquals("E MPJ_HOME=/nowhere has no lib/mpj.jar", err.toString(StandardCharsets.UTF_8).strip());
    }

    @Test
    @Timeout(30)
    void theRendezvousSendsEveryRankThePeerTableInRankOrder() throws Exception {
        try (NiodevRendezvous meet = new NiodevRendezvous(3)) {
            assertEquals("127.0.0.1", meet.host());
            List<CompletableFuture<String>> ranks = new ArrayList<>();
            for (int r = 2; r >= 0; r--) {
                ranks.add(standInRank(meet.port(), r));
            }
            String table = meet.await(10_000, () -> null);
            String want = "#Peer Information;127.0.0.1@2000@1000@0@0;127.0.0.1@2001@1001@1@0;127.0.0.1@2002@1002@2@0";
            assertEquals(want, table);
            for (CompletableFuture<String> r : ranks) {
                assertEquals(want, r.get(10, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    @Timeout(30)
    void theRendezvousNamesTheRanksThatDidNotCome() throws Exception {
        try (NiodevRendezvous meet = new NiodevRendezvous(3)) {
            standInRank(meet.port(), 1);
            IllegalStateException late = assertThrows(IllegalStateException.class, () -> meet.await(1_000, () -> null));
            assertTrue(late.getMessage().startsWith("the niodev ranks did not meet within 1.0 s: ranks 0, 2 sent no ports to 127.0.0.1:"),
                    late.getMessage());
        }
        try (NiodevRendezvous meet = new NiodevRendezvous(2)) {
            IllegalStateException dead = assertThrows(IllegalStateException.class,
                    () -> meet.await(10_000, () -> "niodev rank 1 exited with status 1 before the ranks met"));
            assertEquals("niodev rank 1 exited with status 1 before the ranks met (ranks 0, 1 had not met the others)",
                    dead.getMessage());
        }
    }

    /**
     * A rank's side of the rendezvous, as NIODevice.init does it (write port 1000 + rank, read port 2000 + rank), on a
     * thread of its own: the stand-ins block until all have come.
     */
    private static CompletableFuture<String> standInRank(int port, int rank) {
        return CompletableFuture.supplyAsync(() -> {
            try (Socket s = new Socket("127.0.0.1", port)) {
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeUTF(NiodevRendezvous.HELLO);
                out.writeInt(1000 + rank);
                out.writeInt(2000 + rank);
                out.writeInt(rank);
                out.flush();
                return new DataInputStream(s.getInputStream()).readUTF();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, NiodevStarterTest::onItsOwnThread);
    }

    private static void onItsOwnThread(Runnable r) {
        Thread.ofPlatform().daemon().name("niodev-test").start(r);
    }

    @Test
    @Timeout(60)
    void mpjPingPongRunsOnTwoNiodevProcesses() throws Exception {
        String home = mpjHome();
        List<String> echoed = Collections.synchronizedList(new ArrayList<>());
        List<String> rows = NiodevStarter.job("the niodev ping-pong", home, 2, PINGPONG,
                        List.of("--sizes", "8,4096", "--iters", "200", "--reps", "1", "--warmup", "0", "--validate"),
                        PP_RESULT, PP_ERROR)
                .echo((line, stderr) -> echoed.add(line)).run(() -> {
                });
        assertEquals(2, rows.size(), rows + "\n" + String.join("\n", echoed));
        assertTrue(rows.get(0).startsWith("8 200 "), rows.toString());
        assertTrue(rows.get(1).startsWith("4096 200 "), rows.toString());
        assertTrue(echoed.stream().anyMatch(l -> l.startsWith("niodev: 2 ranks met at 127.0.0.1:")), echoed.toString());
    }

    @Test
    @Timeout(60)
    void mpjCollectivesRunOnThreeNiodevProcesses() throws Exception {
        String home = mpjHome();
        List<String> echoed = Collections.synchronizedList(new ArrayList<>());
        List<String> rows = NiodevStarter.job("the niodev collectives", home, 3,
                        "dev.gdasync.apps.collectives.MpjCollBench",
                        List.of("1", "0.0", "allreduce:64:20:5", "alltoall:64:20:5", "bcast:64:20:5"),
                        "COLLECTIVES-MPJ-RESULT", "COLLECTIVES-MPJ-ERROR")
                .echo((line, stderr) -> echoed.add(line)).run(() -> {
                });
        assertEquals(3, rows.size(), rows + "\n" + String.join("\n", echoed));
        assertTrue(rows.get(0).startsWith("allreduce 64 20 "), rows.toString());
        assertTrue(rows.get(1).startsWith("alltoall 64 20 "), rows.toString());
        assertTrue(rows.get(2).startsWith("bcast 64 20 "), rows.toString());
    }

    @Test
    @Timeout(60)
    void aRankKilledMidJobEndsTheRunNamingIt() throws Exception {
        String home = mpjHome();
        CountDownLatch met = new CountDownLatch(1);
        List<String> echoed = Collections.synchronizedList(new ArrayList<>());
        // Ten minutes of warm-up: the ranks ping-pong until one is killed.
        ChildJob job = NiodevStarter.job("the niodev ping-pong", home, 2, PINGPONG,
                        List.of("--sizes", "8", "--iters", "100", "--reps", "1", "--warmup", "600"), PP_RESULT, PP_ERROR)
                .echo((line, stderr) -> {
                    echoed.add(line);
                    if (line.startsWith("niodev: 2 ranks met")) {
                        met.countDown();
                    }
                });
        CompletableFuture<List<String>> run = CompletableFuture.supplyAsync(() -> {
            try {
                return job.run(() -> {
                });
            } catch (java.io.IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, NiodevStarterTest::onItsOwnThread);
        assertTrue(met.await(30, TimeUnit.SECONDS), "the ranks met:\n" + String.join("\n", echoed));
        Thread.sleep(1_000);
        ProcessHandle rank1 = rank(1).orElseThrow(() -> new AssertionError("no rank 1 process"));
        long killed = System.nanoTime();
        rank1.destroyForcibly();
        ExecutionException e = assertThrows(ExecutionException.class, () -> run.get(20, TimeUnit.SECONDS));
        double seconds = (System.nanoTime() - killed) / 1e9;
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertTrue(e.getCause().getMessage().startsWith("the niodev ping-pong failed:"), e.getCause().getMessage());
        assertTrue(e.getCause().getMessage().contains("niodev rank 1 exited with status 137 (killed by signal 9)"),
                e.getCause().getMessage());
        assertTrue(seconds < 5, "the run ended " + seconds + " s after rank 1 was killed");
        assertTrue(rank(0).isEmpty(), "rank 0 is gone too");
    }

    /** @return this test's niodev rank JVM of that rank, found by its Wrapper arguments */
    private static Optional<ProcessHandle> rank(int rank) {
        return ProcessHandle.current().descendants().filter(p -> {
            String[] args = p.info().arguments().orElse(new String[0]);
            for (int i = 0; i + 6 < args.length; i++) {
                if (args[i].equals("runtime.daemon.Wrapper")) {
                    return p.isAlive() && args[i + 6].equals(Integer.toString(rank));
                }
            }
            return false;
        }).findFirst();
    }

    private static String mpjHome() {
        String home = Launcher.mpjHome();
        if (home == null || NiodevStarter.missing(home) != null) {
            System.out.println("NiodevStarterTest: skipping the niodev run: MPJ Express is not set up (MPJ_HOME;"
                    + " scripts/test and scripts/mprun set it up)");
        }
        Assumptions.assumeTrue(home != null && NiodevStarter.missing(home) == null, "MPJ Express is not set up");
        return home;
    }

    private static String parseError(String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NiodevStarter.parse(args));
        return e.getMessage();
    }
}
