package dev.gdasync.libmp.bootstrap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static dev.gdasync.libmp.bootstrap.LocalBootstrapTest.bytes;
import static dev.gdasync.libmp.bootstrap.LocalBootstrapTest.ok;
import static dev.gdasync.libmp.bootstrap.LocalBootstrapTest.onThreads;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** EnvBootstrap with its ranks as threads of this JVM over real loopback TCP, for the protocol's cases. */
@Timeout(60)
public class EnvBootstrapTest {
    static final byte[] SECRET = HexFormat.of().parseHex("0123456789abcdef0123456789abcdef");
    static final Duration LONG = Duration.ofSeconds(30);

    final String rendezvous = "127.0.0.1:" + freePort();

    public static int freePort() {
        return RendezvousPorts.pick(InetAddress.getLoopbackAddress());
    }

    JobEnvironment env(int rank, int size, Duration timeout) {
        return JobEnvironment.of(rank, size, rendezvous, SECRET, "envtest", timeout);
    }

    static String message(Object o) {
        return assertInstanceOf(BootstrapException.class, o, () -> "expected a BootstrapException, got " + o).getMessage();
    }

    @Test
    void threeRanksGatherAndMeet() throws Exception {
        List<Callable<Object>> tasks = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            int rank = r;
            tasks.add(() -> {
                try (EnvBootstrap b = EnvBootstrap.connect(env(rank, 3, LONG))) {
                    List<List<byte[]>> got = new ArrayList<>();
                    for (int round = 0; round < 20; round++) {
                        got.add(b.allGather(bytes(rank + ":" + round + "z".repeat(rank * round * 100))));
                        b.barrier();
                    }
                    got.add(b.allGather(new byte[0]));
                    return got;
                }
            });
        }
        List<Object> results = onThreads(tasks);
        for (int r = 0; r < 3; r++) {
            List<List<byte[]>> got = ok(results.get(r));
            for (int round = 0; round < 20; round++) {
                for (int q = 0; q < 3; q++) {
                    assertArrayEquals(bytes(q + ":" + round + "z".repeat(q * round * 100)), got.get(round).get(q));
                }
            }
            got.get(20).forEach(p -> assertEquals(0, p.length));
        }
    }

    @Test
    void connectionsWithoutTheSecretAreRefusedWhileTheRealRanksMeet() throws Exception {
        List<Object> results = onThreads(List.of(
                () -> {
                    try (EnvBootstrap b = EnvBootstrap.connect(env(0, 2, LONG))) {
                        return b.allGather(bytes("root"));
                    }
                },
                () -> {
                    // Garbage (an HTTP probe), then a client that knows the protocol but not the secret:
                    // rank 0 closes both without a verdict and goes on waiting.
                    assertTrue(closedWithoutVerdict(s -> s.getOutputStream().write(
                            "GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII))));
                    assertTrue(closedWithoutVerdict(EnvBootstrapTest::forgedMemberProof));
                    // A rank with the wrong secret refuses rank 0 (which cannot prove it) and gives up at its timeout.
                    byte[] wrong = SECRET.clone();
                    wrong[0] ^= 1;
                    BootstrapException e = assertThrows(BootstrapException.class, () -> EnvBootstrap.connect(
                            JobEnvironment.of(1, 2, rendezvous, wrong, "envtest", Duration.ofMillis(700))));
                    assertTrue(e.getMessage().contains("could not join rank 0 at " + rendezvous + " within 700 ms: the root did"
                            + " not prove the job's secret"), e.getMessage());
                    try (EnvBootstrap b = EnvBootstrap.connect(env(1, 2, LONG))) {
                        return b.allGather(bytes("member"));
                    }
                }));
        for (Object o : results) {
            List<byte[]> got = ok(o);
            assertArrayEquals(bytes("root"), got.get(0));
            assertArrayEquals(bytes("member"), got.get(1));
        }
    }

    interface SocketAction {
        void run(Socket s) throws IOException;
    }

    /** Connects (retrying until rank 0 listens), acts, and reports whether rank 0 closed without a word. */
    boolean closedWithoutVerdict(SocketAction action) throws Exception {
        int colon = rendezvous.lastIndexOf(':');
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try (Socket s = new Socket("127.0.0.1", Integer.parseInt(rendezvous.substring(colon + 1)))) {
                s.setSoTimeout(20_000);
                action.run(s);
                s.getOutputStream().flush();
                DataInputStream in = new DataInputStream(s.getInputStream());
                // Skip whatever the root sent before closing (its challenge), then expect EOF.
                while (in.read() >= 0) {
                    // drain
                }
                return true;
            } catch (java.net.ConnectException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
    }

    /** Speaks the protocol correctly up to the member's proof, which is forged. */
    static void forgedMemberProof(Socket s) throws IOException {
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
        DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
        out.writeInt(Handshake.MAGIC);
        out.writeInt(Handshake.VERSION);
        out.write(new byte[Handshake.NONCE_BYTES]);
        out.flush();
        in.readInt();
        in.readInt();
        in.readNBytes(Handshake.NONCE_BYTES + 32);
        out.writeInt(1);
        out.writeInt(2);
        out.writeUTF("envtest");
        out.write(new byte[32]);
        out.flush();
        assertEquals(-1, in.read(), "rank 0 must close the connection of a forged proof without a verdict");
    }

    @Test
    void aDuplicateRankFailsTheJob() throws Exception {
        List<Object> results = onThreads(List.of(
                () -> EnvBootstrap.connect(env(0, 3, LONG)),
                () -> {
                    EnvBootstrap first = EnvBootstrap.connect(env(1, 3, LONG));
                    try (first) {
                        return first.allGather(bytes("x"));
                    }
                },
                () -> {
                    Thread.sleep(300);
                    return EnvBootstrap.connect(env(1, 3, LONG));
                }));
        assertTrue(message(results.get(0)).contains("the rendezvous failed: two processes joined as rank 1"), message(results.get(0)));
        assertTrue(message(results.get(1)).contains("two processes joined as rank 1"), message(results.get(1)));
        assertTrue(message(results.get(2)).contains("refused this rank: rank 0 of job envtest: the rendezvous failed: two"
                + " processes joined as rank 1"), message(results.get(2)));
    }

    @Test
    void aSizeOrJobIdMismatchFailsTheJob() throws Exception {
        List<Object> results = onThreads(List.of(
                () -> EnvBootstrap.connect(env(0, 2, LONG)),
                () -> EnvBootstrap.connect(JobEnvironment.of(1, 3, rendezvous, SECRET, "envtest", LONG))));
        assertTrue(message(results.get(0)).contains("rank 1 says the job has 3 ranks, rank 0 says 2"), message(results.get(0)));
        assertTrue(message(results.get(1)).contains("refused this rank"), message(results.get(1)));

        // A second job gets a port of its own, as every launched job does: the first job's closed connections
        // may still hold this one (a connection rank 0 closed whose other end has not closed yet blocks a new bind).
        String second = "127.0.0.1:" + freePort();
        List<Object> ids = onThreads(List.of(
                () -> EnvBootstrap.connect(JobEnvironment.of(0, 2, second, SECRET, "envtest", LONG)),
                () -> EnvBootstrap.connect(JobEnvironment.of(1, 2, second, SECRET, "other", LONG))));
        assertTrue(message(ids.get(0)).contains("rank 1 says the job id is 'other', rank 0 says 'envtest'"), message(ids.get(0)));
    }

    @Test
    void theRendezvousTimesOut() throws Exception {
        long t0 = System.nanoTime();
        String root = message(onThreads(List.of(() -> EnvBootstrap.connect(env(0, 3, Duration.ofMillis(500))))).getFirst());
        assertEquals("rank 0 of job envtest: the rendezvous failed: timed out after 500 ms waiting for rank(s) [1, 2]"
                + " to join at " + rendezvous, root);
        String member = message(onThreads(List.of(() -> EnvBootstrap.connect(env(2, 3, Duration.ofMillis(500))))).getFirst());
        assertEquals("rank 2 of job envtest: could not join rank 0 at " + rendezvous + " within 500 ms: connection refused", member);
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10));
    }

    @Test
    void aMemberThatLeavesFailsTheOthersAtOnceNamingIt() throws Exception {
        long t0 = System.nanoTime();
        List<Object> results = onThreads(List.of(
                () -> collectivesThen(0, 3, EnvBootstrap::barrier),
                () -> collectivesThen(1, 3, EnvBootstrap::barrier),
                () -> collectivesThen(2, 3, EnvBootstrap::close)));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(15), "not at once");
        assertEquals("rank 0 of job envtest: rank 2 left the job (it closed its bootstrap), during barrier #1",
                message(results.get(0)));
        assertEquals("rank 1 of job envtest: barrier #1 failed: rank 2 left the job (it closed its bootstrap), during barrier #1",
                message(results.get(1)));
        assertEquals("closed", results.get(2));
    }

    @Test
    void rankZeroLeavingFailsTheMembers() throws Exception {
        List<Object> results = onThreads(List.of(
                () -> collectivesThen(0, 2, EnvBootstrap::close),
                () -> collectivesThen(1, 2, b -> b.allGather(bytes("late")))));
        assertEquals("closed", results.get(0));
        assertEquals("rank 1 of job envtest: allGather #1: rank 0 left the job (it closed its bootstrap)", message(results.get(1)));
    }

    @Test
    void aCollectiveTimesOutAtEveryRank() throws Exception {
        List<Object> results = onThreads(List.of(
                () -> collectivesThen(0, 3, b -> b.allGather(bytes("a")), Duration.ofMillis(1000)),
                () -> collectivesThen(1, 3, b -> Thread.sleep(2_000), Duration.ofMillis(1000)),
                () -> collectivesThen(2, 3, b -> b.allGather(bytes("c")), Duration.ofMillis(1000))));
        assertEquals("rank 0 of job envtest: allGather #1 timed out after 1000 ms waiting for rank(s) [1]", message(results.get(0)));
        assertEquals("rank 2 of job envtest: allGather #1 failed: allGather #1 timed out after 1000 ms waiting for rank(s) [1]",
                message(results.get(2)));
    }

    @Test
    void differentCollectivesAtOnePositionFailTheJob() throws Exception {
        List<Object> results = onThreads(List.of(
                () -> collectivesThen(0, 2, b -> b.allGather(bytes("a"))),
                () -> collectivesThen(1, 2, EnvBootstrap::barrier)));
        assertTrue(message(results.get(0)).contains("rank 1 called barrier while rank 0 called allGather as collective #1"),
                message(results.get(0)));
        assertTrue(message(results.get(1)).contains("rank 1 called barrier while rank 0 called allGather"), message(results.get(1)));
    }

    interface Step {
        void run(EnvBootstrap b) throws Exception;
    }

    /** Joins a job of {@code size}, passes one allGather, then runs {@code then}; returns "closed" or throws. */
    Object collectivesThen(int rank, int size, Step then) throws Exception {
        return collectivesThen(rank, size, then, LONG);
    }

    Object collectivesThen(int rank, int size, Step then, Duration timeout) throws Exception {
        try (EnvBootstrap b = EnvBootstrap.connect(env(rank, size, timeout))) {
            b.allGather(bytes("first"));
            then.run(b);
            return "closed";
        }
    }
}
