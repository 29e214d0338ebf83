package dev.gdasync.libmp;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.StreamFailedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What a rank sees when something goes wrong: a refused post leaves nothing behind, an abort fails every rank's
 * waits at once, and {@code waitAll} reports a failed request wherever it stands in the list. Ranks are threads
 * (real shared memory, one software NIC each).
 */
@Timeout(120)
class FailurePathsTest {
    private static final long WINDOW = 64 * 1024;

    @TempDir
    Path base;

    /**
     * A put queued on a busy stream, then a CPU put to the same peer: the CPU put must wait for the stream's (the
     * doorbell record is cumulative), so it is refused, and nothing of it is left: once the stream ran, puts and
     * sends to that peer work and the pool is whole again. The same with gets.
     */
    @Test
    void aCpuPostRefusedBehindAStreamLeavesNothingBehind() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment exposed = mp.allocate(WINDOW);
            MpWindow win = mp.windowCreate(exposed);
            MemorySegment local = mp.allocate(WINDOW);
            MpRegistration reg = mp.register(local);
            int peer = 1 - mp.rank();
            if (mp.rank() == 0) {
                try (HostStream stream = HostStream.create("busy-" + mp.rank())) {
                    for (boolean get : new boolean[]{false, true}) {
                        CountDownLatch gate = new CountDownLatch(1);
                        stream.launch(() -> await(gate));
                        local.set(JAVA_LONG, 0, get ? 0 : 7);
                        MpRequest queued = get
                                ? mp.igetOnStream(local.asSlice(0, 8), reg, peer, 0, win, stream)
                                : mp.iputOnStream(local.asSlice(0, 8), reg, peer, 0, win, 0, stream);
                        int free = mp.requestsAvailable();
                        int sendQueueFree = sendQueueFree(mp, peer);
                        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> {
                            if (get) {
                                mp.iget(local.asSlice(8, 8), reg, peer, 8, win);
                            } else {
                                mp.iput(local.asSlice(8, 8), reg, peer, 8, win, 0);
                            }
                        });
                        assertTrue(refused.getMessage().contains("not rung yet"), refused.getMessage());
                        assertEquals(free, mp.requestsAvailable(), "the refused request took a pool slot");
                        assertEquals(sendQueueFree, sendQueueFree(mp, peer), "the refused request stayed in the send queue");
                        // A stream post behind another executor's unrung sends is refused the same way, leaving nothing.
                        try (HostStream other = HostStream.create("other-" + mp.rank())) {
                            assertThrows(IllegalStateException.class,
                                    () -> mp.iputOnStream(local.asSlice(16, 8), reg, peer, 16, win, 0, other));
                        }
                        assertEquals(free, mp.requestsAvailable());
                        gate.countDown();
                        stream.synchronize();
                        mp.wait(queued);
                        // The connection is not wedged: CPU puts, gets and sends to the peer work.
                        local.set(JAVA_LONG, 24, 99);
                        mp.wait(mp.iput(local.asSlice(24, 8), reg, peer, 24, win, 0));
                        mp.wait(mp.iget(local.asSlice(32, 8), reg, peer, 24, win));
                        assertEquals(99, local.get(JAVA_LONG, 32));
                        mp.wait(mp.isend(local.asSlice(40, 8), peer, reg));
                    }
                }
            } else {
                for (int i = 0; i < 2; i++) {
                    mp.wait(mp.irecv(local.asSlice(40, 8), peer, reg));
                }
            }
            mp.barrier();
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable(), "the pool is whole again");
        });
    }

    @Test
    void anAbortFailsEveryRanksWaitsAndLaterOperationsNamingTheRank() throws Exception {
        CountDownLatch waiting = new CountDownLatch(1);
        Ranks.run(2, base, mp -> {
            MemorySegment local = mp.allocate(4096);
            MpRegistration reg = mp.register(local);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                MpRequest never = mp.irecv(local.asSlice(0, 8), peer, reg);
                waiting.countDown();
                long t0 = System.nanoTime();
                MpException e = assertThrows(MpException.class, () -> mp.wait(never));
                assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0) < 10, "not at once");
                assertTrue(e.getMessage().contains("rank 0 aborted the job: the input is wrong"), e.getMessage());
            } else {
                await(waiting);
                assertNull(mp.failure());
                mp.abort("the input is wrong");
                assertTrue(mp.failure().contains("rank 0 aborted the job: the input is wrong"), mp.failure());
            }
            MpException later = assertThrows(MpException.class, () -> mp.isend(local.asSlice(8, 8), peer, reg));
            assertEquals(ErrorDetail.JOB_FAILED, later.detail());
            assertTrue(later.getMessage().contains("rank 0 aborted the job"), later.getMessage());
            // close() leaves without a barrier: the other rank may be gone already.
        });
    }

    /**
     * Mp.onJobFailure: a listener runs once per rank with the job's failure (on the bootstrap's thread for the rank
     * that learns of it, on the aborting thread for the rank that aborts), an unregistered one never, and one
     * registered after the failure at once on the registering thread.
     */
    @Test
    void jobFailureListenersRunOnceAndUnregisteredOnesNever() throws Exception {
        CountDownLatch registered = new CountDownLatch(2);
        Ranks.run(2, base, mp -> {
            java.util.concurrent.CompletableFuture<String> heard = new java.util.concurrent.CompletableFuture<>();
            java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
            JobFailureSubscription kept = mp.onJobFailure(reason -> {
                runs.incrementAndGet();
                heard.complete(reason);
            });
            JobFailureSubscription dropped = mp.onJobFailure(reason -> fail("an unregistered listener ran: " + reason));
            dropped.close();
            dropped.close(); // twice: nothing
            assertEquals(1, mp.jobFailureListeners());
            registered.countDown();
            await(registered);
            if (mp.rank() == 0) {
                mp.abort("stop listening");
            }
            String reason = heard.get(30, TimeUnit.SECONDS);
            assertTrue(reason.contains("rank 0 aborted the job: stop listening"), reason);
            Thread me = Thread.currentThread();
            java.util.concurrent.atomic.AtomicReference<Thread> ranOn = new java.util.concurrent.atomic.AtomicReference<>();
            mp.onJobFailure(r -> ranOn.set(Thread.currentThread())).close();
            assertSame(me, ranOn.get(), "registered after the failure: run at once, on this thread");
            kept.close();
            assertEquals(1, runs.get(), "a listener runs once");
            assertEquals(0, mp.jobFailureListeners());
        });
    }

    /** Waits on words a peer would write (a flag), on a stream and on the CPU, end at once when the job fails. */
    @Test
    void wordWaitsEndWhenTheJobFails() throws Exception {
        CountDownLatch waiting = new CountDownLatch(1);
        Ranks.run(2, base, mp -> {
            MemorySegment exposed = mp.allocate(4096);
            MpWindow win = mp.windowCreate(exposed);
            MemoryWord flag = MemoryWord.word32(exposed, 0, "flag of rank " + mp.rank());
            if (mp.rank() == 1) {
                try (HostStream stream = HostStream.create("flag-" + mp.rank())) {
                    mp.wait32OnStream(flag, 1, WaitCondition.EQ, stream);
                    waiting.countDown();
                    StreamFailedException e = assertThrows(StreamFailedException.class, stream::synchronize);
                    assertTrue(e.getCause() instanceof MpException m && m.detail() == ErrorDetail.JOB_FAILED
                            && m.getMessage().contains("rank 0 aborted the job: stop"), String.valueOf(e.getCause()));
                }
                MpException cpu = assertThrows(MpException.class, () -> mp.wait32(flag, 1, WaitCondition.EQ));
                assertTrue(cpu.getMessage().contains("rank 0 aborted the job: stop"), cpu.getMessage());
            } else {
                await(waiting);
                mp.abort("stop");
            }
            assertTrue(win.size(1 - mp.rank()) > 0);
        });
    }

    /**
     * Rank 0 waits for a message rank 1 never sends and for a put to rank 2 that fails (rank 2 deregistered the
     * window): {@code waitAll} reports the put at once, although it comes second, releases it, and leaves the
     * receive outstanding.
     */
    @Test
    void waitAllReportsAFailedRequestWhereverItStands() throws Exception {
        CountDownLatch deregistered = new CountDownLatch(1);
        CountDownLatch reported = new CountDownLatch(1);
        Ranks.run(3, base, mp -> {
            MemorySegment exposed = mp.allocate(WINDOW);
            MpWindow win = mp.windowCreate(exposed);
            MemorySegment local = mp.allocate(WINDOW);
            MpRegistration reg = mp.register(local);
            switch (mp.rank()) {
                case 0 -> {
                    await(deregistered);
                    MpRequest recv = mp.irecv(local.asSlice(0, 8), 1, reg);
                    MpRequest put = mp.iput(local.asSlice(8, 8), reg, 2, 0, win, 0);
                    int free = mp.requestsAvailable();
                    long t0 = System.nanoTime();
                    MpException e = assertThrows(MpException.class, () -> mp.waitAll(List.of(recv, put)));
                    assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0) < 10, "not at once");
                    assertTrue(e.getMessage().startsWith("put to rank 2"), e.getMessage());
                    assertTrue(e.getMessage().contains("1 other request(s) of the wait are still outstanding"), e.getMessage());
                    assertEquals(ErrorDetail.BAD_RKEY, e.detail());
                    assertEquals(RequestState.RELEASED, put.state());
                    assertEquals(free + 1, mp.requestsAvailable());
                    assertTrue(!recv.isComplete(), "the receive is still outstanding");
                    reported.countDown();
                    mp.isend(local.asSlice(16, 8), 1, reg); // now rank 1 sends, and the receive completes
                    mp.wait(recv);
                }
                case 1 -> {
                    await(reported);
                    mp.wait(mp.isend(local.asSlice(0, 8), 0, reg));
                    mp.wait(mp.irecv(local.asSlice(16, 8), 0, reg));
                }
                default -> {
                    mp.deregister(win.local);
                    deregistered.countDown();
                    await(reported);
                }
            }
        });
    }

    private static int sendQueueFree(Mp mp, int peer) {
        return mp.peerLink(peer).qp.sendQueueFree();
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(30, TimeUnit.SECONDS), "timed out waiting for another rank");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
