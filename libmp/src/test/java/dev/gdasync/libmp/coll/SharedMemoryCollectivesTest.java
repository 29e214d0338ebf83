package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.shm.ShmChannel;
import dev.gdasync.libmp.testutil.CollChecks;
import dev.gdasync.libmp.testutil.ThreadRanks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;

import static dev.gdasync.libmp.coll.CollRanks.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared-memory path (ranks as threads of one JVM, which map each other's memory as processes of one host do):
 * every collective exact on each side of every switch point (the header's inline bytes, the slot, the small
 * reductions), non-blocking collectives finished out of order, communicators made by split, and the agreement check
 * that fails every rank at once, naming both calls, when the ranks call different collectives, roots, sizes, types
 * or operators.
 */
class SharedMemoryCollectivesTest {
    private static final long INLINE = 40;
    private static final long SLOT = ShmChannel.DEFAULT_SLOT_BYTES;

    @TempDir
    Path shm;

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 5, 8})
    void bcastAllgatherAlltoallOnEachSideOfTheSwitches(int n) throws Exception {
        CollRanks.runShared(n, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            long most = (SLOT + 1) * n;
            MemorySegment send = mp.allocate(most);
            MemorySegment recv = mp.allocate(most);
            MpRegistration sr = mp.register(send);
            MpRegistration rr = mp.register(recv);
            long[] sizes = {0, 1, INLINE, INLINE + 1, SLOT, SLOT + 1};
            for (long bytes : sizes) {
                // Broadcast from every root.
                for (int root = 0; root < n; root++) {
                    MemorySegment buf = recv.asSlice(0, bytes);
                    for (long i = 0; i < bytes; i++) {
                        buf.set(ValueLayout.JAVA_BYTE, i, me == root ? pattern(root, 0, i, 3) : (byte) -1);
                    }
                    world.bcast(buf, rr, root);
                    for (long i = 0; i < bytes; i++) {
                        require(pattern(root, 0, i, 3) == buf.get(ValueLayout.JAVA_BYTE, i), "bcast " + bytes + " from "
                                + root + " byte " + i);
                    }
                }
                // Allgather, out of place and in place.
                MemorySegment mine = send.asSlice(0, bytes);
                for (long i = 0; i < bytes; i++) {
                    mine.set(ValueLayout.JAVA_BYTE, i, pattern(me, 1, i, 4));
                }
                world.allgather(mine, sr, recv, rr);
                checkGathered(recv, n, bytes, "allgather " + bytes);
                if (bytes % 8 == 0) {
                    recv.fill((byte) -1);
                    MemorySegment.copy(mine, 0, recv, me * bytes, bytes);
                    world.allgather(recv.asSlice(me * bytes, bytes), rr, recv, rr, bytes / 8, DataType.INT64);
                    checkGathered(recv, n, bytes, "allgather in place " + bytes);
                }
            }
            // Alltoall: the whole send buffer (size × block) on each side of the inline bytes and the slot.
            for (long block : new long[] {1, INLINE / n, INLINE / n + 1, SLOT / n, SLOT / n + 1, SLOT + 1}) {
                for (int j = 0; j < n; j++) {
                    for (long i = 0; i < block; i++) {
                        send.set(ValueLayout.JAVA_BYTE, j * block + i, pattern(me, j, i, 5));
                    }
                }
                world.alltoall(send, sr, recv, rr, block);
                for (int j = 0; j < n; j++) {
                    for (long i = 0; i < block; i++) {
                        require(pattern(j, me, i, 5) == recv.get(ValueLayout.JAVA_BYTE, j * block + i),
                                "alltoall " + block + " from " + j + " byte " + i);
                    }
                }
            }
            // Alltoallv, small (in the slot) and large (mapped).
            CollChecks.unevenAlltoallv(mp, world, 300);
            CollChecks.unevenAlltoallv(mp, world, SLOT);
        });
    }

    private static void checkGathered(MemorySegment recv, int n, long bytes, String what) {
        for (int j = 0; j < n; j++) {
            for (long i = 0; i < bytes; i++) {
                require(pattern(j, 1, i, 4) == recv.get(ValueLayout.JAVA_BYTE, j * bytes + i), what + " block " + j
                        + " byte " + i);
            }
        }
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 4, 5, 7})
    void reductionsOnEachSideOfTheSwitchesAndAllreduceHasTheBitsOfReduce(int n) throws Exception {
        CollRanks.runShared(n, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            // Elements of 8 bytes: 5 and 6 are each side of the inline bytes, 1024 and 1025 of the small
            // reductions, 8197 of the slot; 3 and n - 1 give ranks without a block of their own.
            long[] counts = {1, 3, n - 1, 5, 6, 1024, 1025, 8197, 20_011};
            long most = counts[counts.length - 1] * n;
            MemorySegment a = mp.allocate(8 * most);
            MemorySegment b = mp.allocate(8 * most);
            MemorySegment c = mp.allocate(8 * most);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            MpRegistration cr = mp.register(c);
            for (long count : counts) {
                Random rnd = new Random(me * 7919L + count);
                for (long i = 0; i < count * n; i++) {
                    a.setAtIndex(ValueLayout.JAVA_DOUBLE, i, (rnd.nextDouble() - 0.5) * Math.pow(10, rnd.nextInt(9) - 4));
                }
                // The exact reference: integers summed in rank order.
                for (long i = 0; i < count * n; i++) {
                    c.setAtIndex(ValueLayout.JAVA_LONG, i, me * 1_000_003L + i * 17);
                }
                world.allreduce(c, cr, b, br, count, DataType.INT64, ReduceOp.SUM);
                for (long i = 0; i < count; i++) {
                    long want = 0;
                    for (int r = 0; r < n; r++) {
                        want += r * 1_000_003L + i * 17;
                    }
                    assertEquals(want, b.getAtIndex(ValueLayout.JAVA_LONG, i), "allreduce " + count + " element " + i);
                }
                // In place reduce-scatter of the integers: this rank's block of the sum.
                MemorySegment block = c.asSlice(me * count * 8, count * 8);
                world.reduceScatter(c, cr, block, cr, count, DataType.INT64, ReduceOp.SUM);
                for (long i = 0; i < count; i++) {
                    long want = 0;
                    for (int r = 0; r < n; r++) {
                        want += r * 1_000_003L + (me * count + i) * 17;
                    }
                    assertEquals(want, block.getAtIndex(ValueLayout.JAVA_LONG, i), "reduceScatter " + count + " " + i);
                }
                // Random doubles: allreduce in place gives every rank the bits reduce gives each root.
                MemorySegment.copy(a, 0, c, 0, count * 8);
                world.allreduce(c, cr, c, cr, count, DataType.FLOAT64, ReduceOp.SUM);
                for (int root = 0; root < n; root++) {
                    b.fill((byte) 0x5A);
                    world.reduce(a, ar, b, br, count, DataType.FLOAT64, ReduceOp.SUM, root);
                    if (me == root) {
                        assertArrayEquals(c.asSlice(0, count * 8).toArray(ValueLayout.JAVA_LONG),
                                b.asSlice(0, count * 8).toArray(ValueLayout.JAVA_LONG), "reduce to " + root + " " + count);
                    } else {
                        assertEquals((byte) 0x5A, b.get(ValueLayout.JAVA_BYTE, 0), "reduce wrote a non-root");
                    }
                }
                // And every rank holds the same bits: rank 0's broadcast must change nothing.
                MemorySegment.copy(c, 0, b, 0, count * 8);
                world.bcast(b.asSlice(0, count * 8), br, 0);
                assertArrayEquals(c.asSlice(0, count * 8).toArray(ValueLayout.JAVA_LONG),
                        b.asSlice(0, count * 8).toArray(ValueLayout.JAVA_LONG), "allreduce bits on rank " + me);
            }
        });
    }

    @Test
    void nonBlockingCollectivesFinishInAnyOrderOfTests() throws Exception {
        CollRanks.runShared(4, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            int n = world.size();
            long block = 20_000;
            MemorySegment send = mp.allocate(n * block);
            MemorySegment recv = mp.allocate(n * block);
            MemorySegment gathered = mp.allocate(n * 8);
            MemorySegment root = mp.allocate(SLOT + 3);
            MpRegistration sr = mp.register(send);
            MpRegistration rr = mp.register(recv);
            MpRegistration gr = mp.register(gathered);
            MpRegistration or = mp.register(root);
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < block; i++) {
                    send.set(ValueLayout.JAVA_BYTE, j * block + i, pattern(me, j, i, 6));
                }
            }
            MemorySegment mine = mp.allocate(8);
            MpRegistration mr = mp.register(mine);
            mine.set(ValueLayout.JAVA_LONG, 0, 1000L + me);
            root.fill(me == 2 ? (byte) 42 : 0);
            CollRequest a = world.ialltoall(send, sr, recv, rr, block);
            CollRequest g = world.iallgather(mine, mr, gathered, gr);
            CollRequest b = world.ibcast(root, or, 2);
            CollRequest z = world.ibarrier();
            world.wait(z);
            assertTrue(a.isComplete() && g.isComplete() && b.isComplete(), "the earlier ones finished before the barrier");
            while (!world.test(b)) {
                Thread.onSpinWait();
            }
            world.wait(g);
            world.wait(a);
            assertEquals(0, coll.active());
            for (int j = 0; j < n; j++) {
                assertEquals(1000L + j, gathered.getAtIndex(ValueLayout.JAVA_LONG, j));
                for (long i = 0; i < block; i += 97) {
                    assertEquals(pattern(j, me, i, 6), recv.get(ValueLayout.JAVA_BYTE, j * block + i));
                }
            }
            for (long i = 0; i < root.byteSize(); i += 501) {
                assertEquals((byte) 42, root.get(ValueLayout.JAVA_BYTE, i));
            }
            assertThrows(IllegalStateException.class, () -> world.wait(a), "a released request is refused");
        });
    }

    @Test
    void communicatorsFromSplitTakeThePathAndKeepTheirTrafficApart() throws Exception {
        CollRanks.runShared(5, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            Communicator half = world.split(me % 2, -me).orElseThrow();
            Optional<Communicator> none = world.split(me == 4 ? Communicator.UNDEFINED : 0, me);
            assertEquals(me == 4, none.isEmpty());
            assertTrue(half.sharedMemory(), "a split communicator of one host takes the path");
            MemorySegment v = mp.allocate(64);
            MemorySegment w = mp.allocate(64);
            MpRegistration vr = mp.register(v);
            MpRegistration wr = mp.register(w);
            for (int round = 0; round < 50; round++) {
                v.setAtIndex(ValueLayout.JAVA_LONG, 0, me + round);
                half.allreduce(v, vr, w, wr, 1, DataType.INT64, ReduceOp.SUM);
                long want = round * half.size();
                for (int r = me % 2; r < 5; r += 2) {
                    want += r;
                }
                assertEquals(want, w.getAtIndex(ValueLayout.JAVA_LONG, 0), "half " + me % 2 + " round " + round);
                world.allreduce(v, vr, w, wr, 1, DataType.INT64, ReduceOp.MAX);
                assertEquals(4 + round, w.getAtIndex(ValueLayout.JAVA_LONG, 0), "world round " + round);
                if (none.isPresent()) {
                    none.get().barrier();
                }
            }
            // Keys reversed: rank order in the half is the reverse of the world's.
            assertEquals((half.size() - 1) - half.rank(), me / 2);
        });
    }

    @Test
    void ranksThatCallDifferentCollectivesAllFailAtOnceNamingBothCalls() throws Exception {
        CollRanks.runShared(3, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            MemorySegment a = mp.allocate(4096);
            MemorySegment b = mp.allocate(4096);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            b.fill((byte) 9);
            // A different collective: rank 2 calls bcast while the others call allreduce (#0).
            String mine = me == 2 ? "bcast of 64 bytes from root 0" : "allreduce of 64 bytes (INT64 SUM)";
            CollectiveException e = assertThrows(CollectiveException.class, () -> {
                if (me == 2) {
                    world.bcast(b.asSlice(0, 64), br, 0);
                } else {
                    world.allreduce(a, ar, b, br, 8, DataType.INT64, ReduceOp.SUM);
                }
            });
            String other = me == 2 ? "rank 0 called allreduce of 64 bytes (INT64 SUM) as its #0"
                    : "rank 2 called bcast of 64 bytes from root 0 as its #0";
            assertEquals(mine + " (#0 on communicator 0, rank " + me + " of 3): " + other
                    + ": the ranks disagree; nothing was written", e.getMessage());
            assertEquals((byte) 9, b.get(ValueLayout.JAVA_BYTE, 0), "nothing written");
            // Different roots: each rank names its own root (#1).
            e = assertThrows(CollectiveException.class, () -> world.bcast(b.asSlice(0, 8), br, me));
            assertTrue(e.getMessage().startsWith("bcast of 8 bytes from root " + me + " (#1 on communicator 0, rank "
                    + me + " of 3): rank "), e.getMessage());
            // A reduce whose root differs on rank 1 (#2).
            e = assertThrows(CollectiveException.class,
                    () -> world.reduce(a, ar, b, br, 8, DataType.INT64, ReduceOp.SUM, me == 1 ? 1 : 0));
            assertTrue(e.getMessage().contains("called reduce of 64 bytes (INT64 SUM) to root " + (me == 1 ? 0 : 1)),
                    e.getMessage());
            // Different counts, types and operators (#3, #4, #5).
            e = assertThrows(CollectiveException.class,
                    () -> world.allreduce(a, ar, b, br, me == 0 ? 2 : 3, DataType.INT32, ReduceOp.SUM));
            assertTrue(e.getMessage().contains("the ranks disagree"), e.getMessage());
            e = assertThrows(CollectiveException.class,
                    () -> world.allreduce(a, ar, b, br, 2, me == 0 ? DataType.FLOAT32 : DataType.INT32, ReduceOp.SUM));
            assertTrue(e.getMessage().contains(me == 0 ? "(INT32 SUM)" : "(FLOAT32 SUM)"), e.getMessage());
            e = assertThrows(CollectiveException.class,
                    () -> world.allreduce(a, ar, b, br, 2, DataType.INT32, me == 0 ? ReduceOp.MAX : ReduceOp.MIN));
            assertTrue(e.getMessage().contains("the ranks disagree"), e.getMessage());
            assertEquals((byte) 9, b.get(ValueLayout.JAVA_BYTE, 0), "nothing written by any of them");
            // The ranks are still in step: the next collective works (#6).
            a.setAtIndex(ValueLayout.JAVA_LONG, 0, me);
            world.allreduce(a, ar, b, br, 1, DataType.INT64, ReduceOp.SUM);
            assertEquals(3, b.getAtIndex(ValueLayout.JAVA_LONG, 0));
        });
    }

    @Test
    void anAlltoallvSizeDisagreementFailsTheReceiverOnlyAndTheRanksStayInStep() throws Exception {
        CollRanks.runShared(3, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            MemorySegment send = mp.allocate(300);
            MemorySegment recv = mp.allocate(300);
            MpRegistration sr = mp.register(send);
            MpRegistration rr = mp.register(recv);
            send.fill((byte) (10 + me));
            recv.fill((byte) -1);
            long[] counts = {100, 100, 100};
            long[] displs = {0, 100, 200};
            // Rank 0 sends rank 1 only 50 bytes: rank 1's request fails naming the pair, its block stays unwritten.
            long[] sendCounts = me == 0 ? new long[] {100, 50, 100} : counts;
            CollRequest r = world.ialltoallv(send, sr, sendCounts, displs, recv, rr, counts, displs);
            if (me == 1) {
                CollectiveException e = assertThrows(CollectiveException.class, () -> world.wait(r));
                assertEquals("alltoallv (#0 on communicator 0, rank 1 of 3): rank 0 sends 50 bytes to rank 1 but rank 1"
                        + " expects 100 from it; the block was not written", e.getMessage());
                assertEquals((byte) -1, recv.get(ValueLayout.JAVA_BYTE, 0), "block from rank 0 unwritten");
                assertEquals((byte) 12, recv.get(ValueLayout.JAVA_BYTE, 200), "block from rank 2 written");
            } else {
                world.wait(r);
            }
            world.barrier();
        });
    }

    @Test
    void aRankThatNeverCallsGivesATimeoutNamingItAndHowFarItGot() throws Exception {
        MpConfig config = CollRanks.config(shm).withWaitTimeout(Duration.ofMillis(1500));
        ThreadRanks.run(2, config, "shm-timeout", Duration.ofSeconds(60), mp -> {
            try (Collectives coll = Collectives.host(mp)) {
                Communicator world = coll.world();
                world.barrier();
                if (world.rank() == 0) {
                    CollectiveException e = assertThrows(CollectiveException.class, world::barrier);
                    assertEquals("barrier (#1 on communicator 0, rank 0 of 2) did not finish within PT1.5S: rank 1 has"
                            + " not called it: its latest collective on communicator 0 is #0", e.getMessage());
                }
                // Rank 1 leaves without the second barrier; its Collectives close (rank 0 waits for nothing more).
                mp.barrier();
            }
        });
    }

    @Test
    void theCollectivesRefuseCallsOnceClosed() throws Exception {
        CollRanks.runShared(2, shm, coll -> {
            Communicator world = coll.world();
            world.barrier();
            coll.close();
            assertThrows(IllegalStateException.class, world::barrier);
            assertFalse(world.sharedMemory() && coll.active() > 0, "nothing left active");
        });
    }
}
