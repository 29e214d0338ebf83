package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.proxy.CollProxy;
import dev.gdasync.libmp.testutil.ThreadRanks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The offload engine's errors: a size disagreement, a proxy that stops under a pending collective, no proxy. */
class OffloadFailureTest {
    @TempDir
    Path shm;

    @Test
    void aSizeDisagreementFailsBothRanksAndLeavesTheBlockUnwritten() throws Exception {
        CollRanks.runOffload(2, shm, CollRanks::disagreeingBcast);
    }

    @Test
    void aProxyThatStopsFailsThePendingCollectiveAndRefusesNewOnes() throws Exception {
        CountDownLatch posted = new CountDownLatch(1);
        CountDownLatch failed = new CountDownLatch(1);
        CollProxy proxy = CollRanks.startProxy(2, shm, CollProxy.DEFAULT_THRESHOLD);
        try {
            ThreadRanks.run(2, CollRanks.config(shm), "coll-rank", Duration.ofSeconds(60), mp -> {
                try (Collectives coll = Collectives.offload(mp, CollRanks.locator(shm))) {
                    Communicator world = coll.world();
                    MemorySegment buf = mp.allocate(256);
                    MpRegistration reg = mp.register(buf);
                    if (world.rank() == 1) {
                        // Never joins the allgather: it stops the proxy once rank 0 posted.
                        assertTrue(posted.await(30, TimeUnit.SECONDS));
                        proxy.close();
                        assertTrue(failed.await(30, TimeUnit.SECONDS));
                        return;
                    }
                    CollRequest r = world.iallgather(buf.asSlice(0, 64), reg, buf.asSlice(128, 128), reg);
                    posted.countDown();
                    CollectiveException e = assertThrows(CollectiveException.class, () -> world.wait(r));
                    failed.countDown();
                    String gone = "the collective proxy (pid " + ProcessHandle.current().pid() + ") is gone";
                    // Ranks of one host take the shared-memory path, which the proxy only helps; losing it still
                    // fails the pending collective and refuses new ones, as on the proxy's own queue.
                    assertTrue(world.sharedMemory(), "two ranks of one JVM share memory");
                    assertEquals("allgather of 64 bytes per rank (#0 on communicator 0, rank 0 of 2) cannot finish: "
                            + gone, e.getMessage());
                    CollectiveException refused = assertThrows(CollectiveException.class, () -> world.ibcast(buf, reg, 0));
                    assertTrue(refused.getMessage().startsWith("collectives on " + world + " are unusable: "
                            + "allgather of 64 bytes per rank (#0 on communicator 0, rank 0 of 2) cannot finish: " + gone),
                            refused.getMessage());
                }
            });
        } finally {
            proxy.close();
        }
    }

    @Test
    void noProxyBehindTheLocatorIsAPreciseError() throws Exception {
        ThreadRanks.run(1, CollRanks.config(shm).withWaitTimeout(Duration.ofSeconds(1)), "coll-rank", Duration.ofSeconds(30),
                mp -> {
                    IllegalStateException e = assertThrows(IllegalStateException.class,
                            () -> Collectives.offload(mp, shm.resolve("nobody")));
                    assertEquals("no collective proxy published " + shm.resolve("nobody") + " within 1 s: is the job"
                            + " started with scripts/mprun --proxies?", e.getMessage());
                });
    }
}
