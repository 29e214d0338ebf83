package dev.gdasync.libmp.bootstrap;

import dev.gdasync.libmp.MpException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class LocalBootstrapTest {

    /** Runs one task per rank on its own thread; returns their results or exceptions. */
    static List<Object> onThreads(List<Callable<Object>> tasks) throws InterruptedException {
        List<FutureTask<Object>> futures = new ArrayList<>();
        for (Callable<Object> t : tasks) {
            FutureTask<Object> f = new FutureTask<>(t);
            futures.add(f);
            Thread.ofPlatform().daemon().start(f);
        }
        List<Object> results = new ArrayList<>();
        for (FutureTask<Object> f : futures) {
            try {
                results.add(f.get(30, TimeUnit.SECONDS));
            } catch (ExecutionException e) {
                results.add(e.getCause());
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("a rank did not finish in 30 s", e);
            }
        }
        return results;
    }

    /** @return {@code o} as a T, failing the test with its stack if it is an exception */
    @SuppressWarnings("unchecked")
    static <T> T ok(Object o) {
        if (o instanceof Throwable t) {
            throw new AssertionError("a rank failed: " + t, t);
        }
        return (T) o;
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void fourRanksGatherAndMeetRepeatedly() throws Exception {
        List<Bootstrap> group = LocalBootstrap.group(4, Duration.ofSeconds(20));
        List<Callable<Object>> tasks = new ArrayList<>();
        for (Bootstrap b : group) {
            tasks.add(() -> {
                try (b) {
                    List<List<byte[]>> rounds = new ArrayList<>();
                    for (int round = 0; round < 50; round++) {
                        rounds.add(b.allGather(bytes("r" + b.rank() + "-" + round + "-" + "y".repeat(b.rank() * round))));
                        if (round % 7 == 0) {
                            b.barrier();
                        }
                    }
                    rounds.add(b.allGather(new byte[0]));
                    return rounds;
                }
            });
        }
        List<Object> results = onThreads(tasks);
        for (int r = 0; r < 4; r++) {
            List<List<byte[]>> rounds = ok(results.get(r));
            for (int round = 0; round < 50; round++) {
                List<byte[]> got = rounds.get(round);
                assertEquals(4, got.size());
                for (int q = 0; q < 4; q++) {
                    assertArrayEquals(bytes("r" + q + "-" + round + "-" + "y".repeat(q * round)), got.get(q),
                            "rank " + r + " round " + round + " part " + q);
                }
            }
            rounds.get(50).forEach(p -> assertEquals(0, p.length));
        }
        String job = group.get(0).jobId();
        assertTrue(JobIds.isValid(job), job);
        group.forEach(b -> assertEquals(job, b.jobId()));
        for (int r = 0; r < 4; r++) {
            assertEquals(r, group.get(r).rank());
            assertEquals(4, group.get(r).size());
        }
    }

    @Test
    void resultsAreCopiesPerRank() throws Exception {
        List<Bootstrap> group = LocalBootstrap.group(2, Duration.ofSeconds(20));
        byte[] mine = bytes("zero");
        List<Object> results = onThreads(List.of(
                () -> {
                    List<byte[]> got = group.get(0).allGather(mine);
                    got.get(1)[0] = 'X';
                    mine[0] = 'Y';
                    group.get(0).barrier();
                    return got;
                },
                () -> {
                    List<byte[]> got = group.get(1).allGather(bytes("one"));
                    group.get(1).barrier();
                    return got;
                }));
        List<byte[]> seenBy1 = ok(results.get(1));
        assertArrayEquals(bytes("zero"), seenBy1.get(0));
        assertArrayEquals(bytes("one"), seenBy1.get(1));
    }

    @Test
    void aRankThatNeverArrivesFailsTheOthersAfterTheTimeout() throws Exception {
        List<Bootstrap> group = LocalBootstrap.group(3, Duration.ofMillis(300));
        long t0 = System.nanoTime();
        List<Object> results = onThreads(List.of(
                () -> group.get(0).allGather(bytes("a")),
                () -> group.get(1).allGather(bytes("b"))));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        for (Object o : results) {
            BootstrapException e = assertInstanceOf(BootstrapException.class, o);
            assertTrue(e.getMessage().contains("timed out after 300 ms waiting for rank(s) [2]"), e.getMessage());
            assertTrue(e.getMessage().contains("allGather #0"), e.getMessage());
        }
        assertTrue(ms >= 250 && ms < 10_000, ms + " ms");
    }

    @Test
    void aClosedRankFailsTheOthersAtOnce() throws Exception {
        List<Bootstrap> group = LocalBootstrap.group(3, Duration.ofSeconds(30));
        long t0 = System.nanoTime();
        List<Object> results = onThreads(List.of(
                () -> group.get(0).allGather(bytes("a")),
                () -> {
                    group.get(2).close();
                    return group.get(1).allGather(bytes("b"));
                }));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        for (Object o : results) {
            BootstrapException e = assertInstanceOf(BootstrapException.class, o);
            assertTrue(e.getMessage().contains("rank(s) [2] left the job"), e.getMessage());
        }
        assertTrue(ms < 10_000, "failed after " + ms + " ms, not at once");
        BootstrapException closed = assertThrows(BootstrapException.class, () -> group.get(2).barrier());
        assertTrue(closed.getMessage().contains("closed bootstrap"), closed.getMessage());
    }

    @Test
    void aRankClosingWhileOthersWaitWakesThem() throws Exception {
        List<Bootstrap> group = LocalBootstrap.group(2, Duration.ofSeconds(30));
        List<Object> results = onThreads(List.of(
                () -> group.get(0).allGather(bytes("a")),
                () -> {
                    Thread.sleep(200);
                    group.get(1).close();
                    return "closed";
                }));
        BootstrapException e = assertInstanceOf(BootstrapException.class, results.get(0));
        assertTrue(e.getMessage().contains("rank(s) [1] left the job"), e.getMessage());
    }

    @Test
    void differentCollectivesAtOnePositionFailBothRanks() throws Exception {
        List<Bootstrap> group = LocalBootstrap.group(2, Duration.ofSeconds(30));
        List<Object> results = onThreads(List.of(
                () -> group.get(0).allGather(bytes("a")),
                () -> {
                    Thread.sleep(100);
                    group.get(1).barrier();
                    return "passed";
                }));
        for (Object o : results) {
            BootstrapException e = assertInstanceOf(BootstrapException.class, o);
            assertTrue(e.getMessage().contains("rank 1 called barrier while rank 0 called allGather as collective #0"), e.getMessage());
        }
    }

    @Test
    void aGroupOfOneNeedsNobody() {
        Bootstrap only = LocalBootstrap.group(1).getFirst();
        assertArrayEquals(bytes("me"), only.allGather(bytes("me")).getFirst());
        only.barrier();
        only.close();
        only.close();
        assertThrows(BootstrapException.class, only::barrier);
    }

    @Test
    void aFailedCollectiveIsAnMpExceptionWithoutANicVerdict() {
        // docs/decisions.md, "Exception types": code that catches MpException around library calls catches this too.
        Bootstrap only = LocalBootstrap.group(1).getFirst();
        only.close();
        MpException e = assertThrows(MpException.class, only::barrier);
        assertInstanceOf(BootstrapException.class, e);
        assertEquals(null, e.status());
        assertEquals(null, e.detail());
    }

    @Test
    void badArgumentsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> LocalBootstrap.group(0));
        assertThrows(IllegalArgumentException.class, () -> LocalBootstrap.group(2, Duration.ZERO));
    }
}
