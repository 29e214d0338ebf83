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
import java.util.function.BooleanSupplier;

import static dev.gdasync.libmp.coll.CollRanks.pattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The offload engine on one host: the ranks take the shared-memory path and the collective proxy fills their receive
 * buffers while they compute and call nothing (the proxy on a thread of this JVM with a NIC of its own, mapping the
 * ranks' memory as a proxy process of the host does); a fill it cannot vouch for (sizes that disagree) is left to the
 * rank, which reports it.
 */
class ProxyAssistTest {
    private static final long FILL_DEADLINE_NANOS = 30_000_000_000L;

    @TempDir
    Path shm;

    @Test
    void theProxyFillsTheBuffersOfRanksThatComputeWithoutCallingAnything() throws Exception {
        int n = 3;
        try (CollProxy proxy = CollRanks.startProxy(n, shm, CollProxy.DEFAULT_THRESHOLD)) {
            ThreadRanks.run(n, CollRanks.config(shm), "assist-rank", Duration.ofSeconds(120), mp -> {
                try (Collectives coll = Collectives.offload(mp, CollRanks.locator(shm))) {
                    Communicator world = coll.world();
                    assertTrue(coll.offloaded() && world.sharedMemory(), "the offload engine on the shared-memory path");
                    for (long block : new long[] {8, 5000, 70_000}) {
                        computeUntilFull(mp, world, block);
                    }
                }
            });
            // Every rank computed until its buffers were full, calling nothing, and a post claims no fill (not even
            // the last one, which finds everything ready): the proxy filled every buffer, own blocks included. Per
            // block size: an alltoall and an allgather for each of the 3 ranks, a bcast for the 2 that are not root.
            assertEquals(3L * (n + n + (n - 1)), proxy.sharedMemoryFills(), "buffers the proxy filled");
        }
    }

    /** Posts alltoall, allgather and a bcast from rank 1, computes until the receive buffers hold the result, waits. */
    private static void computeUntilFull(Mp mp, Communicator world, long block) {
        int me = world.rank();
        int n = world.size();
        MemorySegment send = mp.allocate(n * block);
        MemorySegment recv = mp.allocate(n * block);
        MemorySegment gathered = mp.allocate(n * block);
        MemorySegment root = mp.allocate(block);
        MpRegistration sr = mp.register(send);
        MpRegistration rr = mp.register(recv);
        MpRegistration gr = mp.register(gathered);
        MpRegistration or = mp.register(root);
        for (int j = 0; j < n; j++) {
            for (long i = 0; i < block; i++) {
                send.set(ValueLayout.JAVA_BYTE, j * block + i, pattern(me, j, i, 7));
            }
        }
        for (long i = 0; i < block; i++) {
            root.set(ValueLayout.JAVA_BYTE, i, me == 1 ? pattern(1, 9, i, 8) : 0);
        }
        CollRequest a = world.ialltoall(send, sr, recv, rr, block);
        CollRequest g = world.iallgather(send.asSlice(0, block), sr, gathered, gr);
        CollRequest b = world.ibcast(root, or, 1);
        computeUntil(() -> {
            for (int j = 0; j < n; j++) {
                long last = block - 1;
                if (recv.get(ValueLayout.JAVA_BYTE, j * block + last) != pattern(j, me, last, 7)
                        || gathered.get(ValueLayout.JAVA_BYTE, j * block + last) != pattern(j, 0, last, 7)) {
                    return false;
                }
            }
            return root.get(ValueLayout.JAVA_BYTE, block - 1) == pattern(1, 9, block - 1, 8);
        }, "the proxy to fill rank " + me + "'s buffers of " + block + " bytes");
        world.wait(a);
        world.wait(g);
        world.wait(b);
        for (int j = 0; j < n; j++) {
            for (long i = 0; i < block; i++) {
                assertEquals(pattern(j, me, i, 7), recv.get(ValueLayout.JAVA_BYTE, j * block + i));
                assertEquals(pattern(j, 0, i, 7), gathered.get(ValueLayout.JAVA_BYTE, j * block + i));
            }
        }
        for (long i = 0; i < block; i++) {
            assertEquals(pattern(1, 9, i, 8), root.get(ValueLayout.JAVA_BYTE, i));
        }
        // Nobody frees buffers another rank's fill may still read.
        world.barrier();
    }

    private static void computeUntil(BooleanSupplier full, String what) {
        long deadline = System.nanoTime() + FILL_DEADLINE_NANOS;
        long x = 1;
        while (!full.getAsBoolean()) {
            for (int i = 0; i < 1000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L; // compute: no library call
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waited 30 s for " + what + " (" + x + ")");
            }
        }
    }

    @Test
    void sizesThatDisagreeAreLeftToTheRankWhichReportsThem() throws Exception {
        try (CollProxy proxy = CollRanks.startProxy(2, shm, CollProxy.DEFAULT_THRESHOLD)) {
            ThreadRanks.run(2, CollRanks.config(shm), "assist-rank", Duration.ofSeconds(60), mp -> {
                try (Collectives coll = Collectives.offload(mp, CollRanks.locator(shm))) {
                    Communicator world = coll.world();
                    int me = world.rank();
                    MemorySegment send = mp.allocate(200);
                    MemorySegment recv = mp.allocate(200);
                    MpRegistration sr = mp.register(send);
                    MpRegistration rr = mp.register(recv);
                    send.fill((byte) (20 + me));
                    recv.fill((byte) -1);
                    long[] displs = {0, 100};
                    long[] counts = {100, 100};
                    // Rank 0 sends rank 1 only 60 bytes; rank 1 expects 100.
                    CollRequest r = world.ialltoallv(send, sr, me == 0 ? new long[] {100, 60} : counts, displs, recv, rr,
                            counts, displs);
                    long until = System.nanoTime() + 50_000_000L;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait(); // long past the proxy's grace: it looked, and left this one alone
                    }
                    if (me == 1) {
                        assertEquals((byte) -1, recv.get(ValueLayout.JAVA_BYTE, 0), "the proxy wrote nothing");
                        CollectiveException e = assertThrows(CollectiveException.class, () -> world.wait(r));
                        assertEquals("alltoallv (#0 on communicator 0, rank 1 of 2): rank 0 sends 60 bytes to rank 1 but"
                                + " rank 1 expects 100 from it; the block was not written", e.getMessage());
                    } else {
                        world.wait(r);
                        assertEquals((byte) 21, recv.get(ValueLayout.JAVA_BYTE, 100));
                    }
                    world.barrier();
                }
            });
        }
    }
}
