package dev.gdasync.libmp.shmem;

import dev.gdasync.ki.KiException;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.shmem.ShmemDevice;
import dev.gdasync.libmp.MpException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KI model's bad input: kiPrepare's limits, a launch over a state that is not one, device calls outside the heap,
 * to a PE out of range or past the prepared slots give precise errors; the runtime refuses other calls while a launch
 * is prepared and takes them again after complete, with the queue pairs still in order.
 */
@Timeout(300)
class ShmemKiErrorsTest {
    @TempDir
    Path base;

    @Test
    void badKiInputIsRefusedAndTheRuntimeStaysUsable() throws Exception {
        ShmemRanks.run(2, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            int peer = 1 - me;
            MemorySegment word = shmem.calloc(1, 8);
            MemorySegment block = shmem.calloc(8, 8);
            shmem.barrierAll();
            try (HostKiExecutor executor = HostKiExecutor.create("ki-errors-" + me)) {
                assertEquals("slotsPerPe must be in 1..256 (half the send queue depth 512), got 257",
                        assertThrows(IllegalArgumentException.class, () -> shmem.kiPrepare(executor, 1, 257)).getMessage());
                assertEquals("blocks must be in 1..1024, got 0",
                        assertThrows(IllegalArgumentException.class, () -> shmem.kiPrepare(executor, 0, 4)).getMessage());
                assertThrows(NullPointerException.class, () -> shmem.kiPrepare(null, 1, 4));

                ShmemKi ki = shmem.kiPrepare(executor, 1, 2, Duration.ofSeconds(30));
                assertTrue(assertThrows(IllegalStateException.class, () -> shmem.pLong(word, 1, peer)).getMessage()
                        .contains("a KI launch is prepared"));
                assertTrue(assertThrows(IllegalArgumentException.class,
                        () -> executor.shmem(ki.table(), ki.state(), 2, ctx -> { })).getMessage()
                        .contains("is not a shmem KI state for this table and 2 blocks"));
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment outside = arena.allocate(64, 8);
                    KiException e = assertThrows(KiException.class, () -> executor.shmem(ki.table(), ki.state(), 1,
                            ctx -> ctx.putNbi(outside, block, peer)).join());
                    assertTrue(e.getMessage().contains("inside the symmetric heap"), e.getMessage());
                }
                assertThrows(MpException.class, ki::complete); // the table's status holds the failure
                // After complete the runtime takes calls again and the queue pair is in order.
                shmem.pLong(word, 7, peer);
                shmem.quiet();

                ShmemKi small = shmem.kiPrepare(executor, 1, 2, Duration.ofSeconds(30));
                KiException pe = assertThrows(KiException.class, () -> executor.shmem(small.table(), small.state(), 1,
                        ctx -> ctx.p(word, 1, 2)).join());
                assertTrue(pe.getMessage().contains("a PE in 0..1, got 2"), pe.getMessage());
                assertThrows(MpException.class, small::complete);

                ShmemKi two = shmem.kiPrepare(executor, 1, 2, Duration.ofSeconds(30));
                KiException slots = assertThrows(KiException.class, () -> executor.shmem(two.table(), two.state(), 1,
                        ctx -> {
                            ctx.p(block, 1, peer);
                            ctx.p(block.asSlice(8), 2, peer);
                            ctx.p(block.asSlice(16), 3, peer); // a third slot toward peer: none left
                        }).join());
                assertTrue(slots.getMessage().contains("all 2 prepared for this launch are used"), slots.getMessage());
                assertThrows(MpException.class, two::complete);

                ShmemKi atomics = shmem.kiPrepare(executor, 1, 2, Duration.ofSeconds(30));
                KiException align = assertThrows(KiException.class, () -> executor.shmem(atomics.table(),
                        atomics.state(), 1, ctx -> ctx.atomicFetchAdd(block.asSlice(4), 1, peer)).join());
                assertTrue(align.getMessage().contains("(8-byte aligned)"), align.getMessage());
                assertThrows(MpException.class, atomics::complete);
            }
            shmem.barrierAll();
            // The two p that did land reached the peer's block; the runtime still works.
            assertEquals(1, block.getAtIndex(JAVA_LONG, 0));
            assertEquals(2, block.getAtIndex(JAVA_LONG, 1));
            assertEquals(7, word.get(JAVA_LONG, 0));
            shmem.barrierAll();
        });
    }

    /**
     * The job fails (PE 0 aborts it) while PE 1's kernel waits in waitUntil with an hour's timeout: the prepared
     * launch's job-failure listener aborts it through its table, so the wait ends, the launch fails saying so and
     * complete() gives the job's failure, naming the rank.
     */
    @Test
    void aJobFailureAbortsThePreparedLaunchsWaits() throws Exception {
        CountDownLatch waiting = new CountDownLatch(1);
        ShmemRanks.run(2, base, 1 << 16, shmem -> {
            MemorySegment flag = shmem.calloc(1, 8);
            shmem.barrierAll();
            if (shmem.myPe() == 1) {
                try (HostKiExecutor executor = HostKiExecutor.create("ki-abort-1")) {
                    ShmemKi ki = shmem.kiPrepare(executor, 1, 2, Duration.ofHours(1));
                    KiLaunch l = executor.shmem(ki.table(), ki.state(), 1, ctx -> {
                        waiting.countDown();
                        ctx.waitUntil(flag, ShmemDevice.CMP_EQ, 1);
                    });
                    KiException e = assertThrows(KiException.class, () -> l.join(Duration.ofSeconds(60)));
                    assertTrue(e.getMessage().contains("aborted by the host (the job failed) while waiting for the heap "
                            + "word"), e.getMessage());
                    MpException c = assertThrows(MpException.class, ki::complete);
                    assertTrue(c.getMessage().contains("rank 0 aborted the job: stop the kernel"), c.getMessage());
                }
            } else {
                assertTrue(waiting.await(60, TimeUnit.SECONDS), "PE 1's kernel never started");
                shmem.mp().abort("stop the kernel");
            }
        });
    }
}
