package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.gdsync.swnic.Transport;
import dev.gdasync.gdsync.ucx.UcxLibrary;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The blocking host interpreter's paths: a rank's thread blocks taking turns on its thread through cross-block
 * dependencies, calls repeated without agreement, messages written straight into the receiver's buffer, a rank that
 * calls something else found without an agreement, a late peer waited for, a peer that never calls named in the
 * timeout, and the put path where the peers' memory cannot be mapped (the UCX transport). A killed peer is in
 * {@link MscclProcessTest}.
 */
class MscclHostPathTest {
    @TempDir
    Path shm;
    @TempDir
    Path dir;

    private static int in(int rank, int round, long i) {
        return rank * 100_000 + round * 1_000 + (int) i * 3 + 1;
    }

    /**
     * The hierarchical allreduce (each block's steps wait for the other block's) and the ring allgather, called in
     * turn six times with new data each time: the first call of each kind agrees, the others do not, and every
     * result is exact, with the blocks on the caller's thread and on threads of their own.
     */
    @ParameterizedTest(name = "threads {0}")
    @ValueSource(booleans = {false, true})
    void blocksWithCrossBlockDependenciesTakeTurnsAndRepeatedCallsStayExact(boolean threads) throws Exception {
        MscclPrograms programs = MscclPrograms.load(List.of(
                IrGenerator.write(dir, "h.xml", IrGenerator.hierarchicalAllreduce()),
                MscclRanks.resource("reference/allgather_ring_4gpu_simple.xml")), MscclLimits.defaults());
        MscclConfig config = MscclConfig.defaults().withSlotBytes(64).withThreads(threads);
        MscclRanks.run(4, shm, programs, config, (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            int me = comm.rank();
            long count = 1000;
            MemorySegment a = mp.allocate(4 * count * 4);
            MpRegistration ar = mp.register(a);
            for (int round = 0; round < 6; round++) {
                for (long i = 0; i < count; i++) {
                    a.setAtIndex(ValueLayout.JAVA_INT, i, in(me, round, i));
                }
                assertEquals("hierarchical_allreduce_2x2", rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32,
                        ReduceOp.SUM).orElseThrow().name());
                for (long i = 0; i < count; i++) {
                    int want = 0;
                    for (int r = 0; r < 4; r++) {
                        want += in(r, round, i);
                    }
                    assertEquals(want, a.getAtIndex(ValueLayout.JAVA_INT, i), "round " + round + " element " + i);
                }
                assertNotNull(rt.lastHostRun().direct, "one host: the direct path");
                MemorySegment mine = a.asSlice(me * count * 4, count * 4);
                for (long i = 0; i < count; i++) {
                    mine.setAtIndex(ValueLayout.JAVA_INT, i, in(me, round, i));
                }
                assertTrue(rt.allgather(comm, mine, ar, a, ar, count, DataType.INT32).isPresent());
                for (int r = 0; r < 4; r++) {
                    for (long i = 0; i < count; i++) {
                        assertEquals(in(r, round, i), a.getAtIndex(ValueLayout.JAVA_INT, r * count + i));
                    }
                }
            }
        });
    }

    /** Receives that only store their message, into chunks no unordered step touches, land directly. */
    @Test
    void receivesThatOnlyStoreLandDirectlyWhereNothingElseTouchesTheirChunks() {
        int[] want = {12, 8, 12, 12};
        for (int k = 0; k < MscclRanks.REFERENCE.length; k++) {
            MscclProgram p = MscclRanks.load("reference/" + MscclRanks.REFERENCE[k]).programs().getFirst();
            DirectPlacement placement = DirectPlacement.of(p);
            assertEquals(want[k], placement.directCount(), MscclRanks.REFERENCE[k]);
            // The ring allreduce's reduce-scatter half keeps its slots: rank 0's rrs (step 1) must combine.
            if (p.name().equals("allreduce_ring_inplace")) {
                assertFalse(placement.landsDirectly(0, 0, 1));
                assertTrue(placement.landsDirectly(0, 0, 6));
            }
        }
        // In a ring every rank hears from every other within a call (so a sender knows its receiver finished the
        // call before the last without reading it); from a broadcast's root nobody hears anything.
        MscclProgram ring = MscclRanks.load("reference/allreduce_ring_4gpu_simple.xml").programs().getFirst();
        for (int g = 0; g < 4; g++) {
            for (int p = 0; p < 4; p++) {
                assertTrue(DirectPlacement.of(ring).precedes(p, g), "ring: " + p + " before " + g);
            }
        }
        MscclProgram bcast = TreePrograms.broadcast(4, 0);
        for (int p = 1; p < 4; p++) {
            assertFalse(DirectPlacement.of(bcast).precedes(p, 0), "broadcast: rank " + p + " before the root");
            assertTrue(DirectPlacement.of(bcast).precedes(0, p), "broadcast: the root before rank " + p);
        }
        // A receive into a chunk another block reads at the same time may not land early.
        MscclProgram racy = MscclPrograms.of(List.of(AllPairsPrograms.of(Collective.ALLREDUCE, 2, true)))
                .programs().getFirst();
        assertEquals(0, DirectPlacement.of(racy).directCount(), "all-pairs allreduce receives into scratch");
    }

    /**
     * The four msccl-tools programs at sizes whose tiles are large enough for direct messages (32 KiB chunks; slots
     * of 8 KiB: four tiles a chunk, and of 64 KiB: one), three times with new data: exact on every rank, and the runs
     * published their buffers for the peers' direct writes; the alltoall and the allgather, whose receives all land
     * directly, move each chunk in one tile.
     */
    @ParameterizedTest(name = "{0} B slots")
    @ValueSource(ints = {8 * 1024, 64 * 1024})
    void messagesLandingInTheReceiversBufferGiveExactResults(int slotBytes) throws Exception {
        for (String file : MscclRanks.REFERENCE) {
            MscclPrograms programs = MscclRanks.load("reference/" + file);
            Collective c = programs.programs().getFirst().collective();
            MscclRanks.run(4, shm, programs, MscclConfig.defaults().withSlotBytes(slotBytes), (coll, rt) -> {
                Mp mp = coll.mp();
                Communicator comm = coll.world();
                int me = comm.rank();
                long per = 8192;
                long count = 4 * per;
                MemorySegment a = mp.allocate(4 * count * 4);
                MemorySegment b = mp.allocate(4 * count * 4);
                MpRegistration ar = mp.register(a);
                MpRegistration br = mp.register(b);
                for (int round = 0; round < 3; round++) {
                    switch (c) {
                        case ALLREDUCE -> {
                            fill(a, me, round, 0, count);
                            assertTrue(rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM)
                                    .isPresent());
                            for (long i = 0; i < count; i++) {
                                int want = 0;
                                for (int r = 0; r < 4; r++) {
                                    want += in(r, round, i);
                                }
                                assertEquals(want, a.getAtIndex(ValueLayout.JAVA_INT, i), file + " element " + i);
                            }
                        }
                        case ALLGATHER -> {
                            fill(b.asSlice(me * per * 4), me, round, 0, per);
                            assertTrue(rt.allgather(comm, b.asSlice(me * per * 4, per * 4), br, b, br, per,
                                    DataType.INT32).isPresent());
                            for (int r = 0; r < 4; r++) {
                                for (long i = 0; i < per; i++) {
                                    assertEquals(in(r, round, i), b.getAtIndex(ValueLayout.JAVA_INT, r * per + i));
                                }
                            }
                        }
                        default -> {
                            fill(a, me, round, 0, count);
                            assertTrue(rt.alltoall(comm, a, ar, b, br, per, DataType.INT32).isPresent());
                            for (int r = 0; r < 4; r++) {
                                for (long i = 0; i < per; i++) {
                                    assertEquals(in(r, round, me * per + i),
                                            b.getAtIndex(ValueLayout.JAVA_INT, r * per + i), file + " from " + r);
                                }
                            }
                        }
                    }
                    assertTrue(rt.lastHostRun().exposesBuffers, file + ": some message landed directly");
                    // Where every message lands directly (alltoall, allgather) a chunk moves in one piece.
                    boolean allDirect = c == Collective.ALLTOALL || c == Collective.ALLGATHER;
                    assertEquals(allDirect ? 1 : 32 * 1024 / Math.min(slotBytes / programs.programs().getFirst()
                            .maxCnt(), 32 * 1024), rt.lastHostRun().plan.tiles(), file + " tiles");
                }
            });
        }
    }

    /**
     * Two ranks that agreed on an allreduce and an alltoall before, and then call one each: no agreement runs, and
     * both fail naming the other's call, long before the timeout; later calls are refused.
     */
    @Test
    void aRankThatCallsAnotherProgramIsFoundWithoutAnAgreement() throws Exception {
        disagree((rt, comm, a, ar, b, br) -> comm.rank() == 0
                        ? rt.allreduce(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM)
                        : rt.alltoall(comm, a, ar, b, br, 32, DataType.INT32),
                "alltoall of 32 INT32 out of place, blocking, on communicator 0", "allreduce of 64 INT32 SUM in place");
    }

    /** The same program with another count on one rank: the receiver finds the sender's call at the first message. */
    @Test
    void ranksThatPassDifferentCountsAreFoundAtTheFirstMessage() throws Exception {
        disagree((rt, comm, a, ar, b, br) -> rt.allreduce(comm, a, ar, a, ar, comm.rank() == 0 ? 64 : 128,
                DataType.INT32, ReduceOp.SUM), "allreduce of 128 INT32 SUM", "allreduce of 64 INT32 SUM");
    }

    private interface Call {
        Optional<MscclProgram> run(MscclRuntime rt, Communicator comm, MemorySegment a, MpRegistration ar,
                                   MemorySegment b, MpRegistration br);
    }

    private void disagree(Call mismatch, String rank1Calls, String rank0Calls) throws Exception {
        MscclPrograms programs = MscclPrograms.of(List.of(AllPairsPrograms.of(Collective.ALLREDUCE, 2, true),
                AllPairsPrograms.of(Collective.ALLTOALL, 2, false)));
        MscclConfig config = MscclConfig.defaults().withTimeout(Duration.ofSeconds(60));
        MscclRanks.run(2, shm, programs, config, (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            MemorySegment a = mp.allocate(4 * 256);
            MemorySegment b = mp.allocate(4 * 256);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            for (int i = 0; i < 2; i++) {
                for (long count : new long[] {64, 128}) {
                    assertTrue(rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM).isPresent());
                }
                assertTrue(rt.alltoall(comm, a, ar, b, br, 32, DataType.INT32).isPresent());
            }
            CollectiveException e = assertThrows(CollectiveException.class, () -> mismatch.run(rt, comm, a, ar, b, br));
            String m = e.getMessage();
            assertTrue(m.startsWith("rank " + comm.rank() + " of communicator 0"), m);
            assertTrue(m.contains("the ranks disagree") && !m.contains("did not finish"), m);
            String theirs = comm.rank() == 0 ? rank1Calls : rank0Calls;
            assertTrue(m.contains("rank " + (1 - comm.rank()) + " called " + theirs)
                    || m.contains("rank " + (1 - comm.rank()) + " has moved on"), m);
            IllegalStateException again = assertThrows(IllegalStateException.class,
                    () -> rt.allreduce(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM));
            assertTrue(again.getMessage().startsWith("an earlier run failed"), again.getMessage());
        });
    }

    /** A peer that calls half a second late is waited for; the result is exact. */
    @Test
    void aLatePeerIsWaitedFor() throws Exception {
        MscclPrograms programs = MscclPrograms.of(List.of(AllPairsPrograms.of(Collective.ALLREDUCE, 3, true)));
        MscclRanks.run(3, shm, programs, MscclConfig.defaults().withTimeout(Duration.ofSeconds(30)), (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            MemorySegment a = mp.allocate(4 * 99);
            MpRegistration ar = mp.register(a);
            for (int round = 0; round < 3; round++) {
                fill(a, comm.rank(), round, 0, 99);
                if (round == 2 && comm.rank() == 1) {
                    Thread.sleep(500);
                }
                assertTrue(rt.allreduce(comm, a, ar, a, ar, 99, DataType.INT32, ReduceOp.SUM).isPresent());
                for (long i = 0; i < 99; i++) {
                    assertEquals(in(0, round, i) + in(1, round, i) + in(2, round, i),
                            a.getAtIndex(ValueLayout.JAVA_INT, i));
                }
            }
        });
    }

    /** A peer that never makes the call: the timeout names the block's wait and how far the peer got. */
    @Test
    void aPeerThatNeverCallsTimesOutNamingItAndHowFarItGot() throws Exception {
        MscclPrograms programs = MscclPrograms.of(List.of(AllPairsPrograms.of(Collective.ALLREDUCE, 2, true)));
        MscclRanks.run(2, shm, programs, MscclConfig.defaults().withTimeout(Duration.ofSeconds(1)), (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            MemorySegment a = mp.allocate(4 * 16);
            MpRegistration ar = mp.register(a);
            rt.allreduce(comm, a, ar, a, ar, 16, DataType.INT32, ReduceOp.SUM);
            rt.allreduce(comm, a, ar, a, ar, 16, DataType.INT32, ReduceOp.SUM);
            if (comm.rank() == 0) {
                CollectiveException e = assertThrows(CollectiveException.class,
                        () -> rt.allreduce(comm, a, ar, a, ar, 16, DataType.INT32, ReduceOp.SUM));
                String m = e.getMessage();
                assertTrue(m.contains("did not finish within PT1S"), m);
                assertTrue(m.contains("waits for message 1 from rank 1 on channel 0"), m);
                assertTrue(m.contains("rank 1 has not called it yet (its latest call on communicator 0"), m);
            }
        });
    }

    /**
     * With the UCX transport the peers' memory cannot be mapped: the runs take the put path and stay exact, also when
     * two programs alternate (a region then gets another sender from call to call).
     */
    @Test
    void withoutMappedMemoryTheRunsTakeThePutPath() throws Exception {
        Optional<String> noUcx = UcxLibrary.unavailableReason();
        noUcx.ifPresent(r -> System.out.println("SKIPPED (UCX): " + r));
        assumeTrue(noUcx.isEmpty(), noUcx.orElse(""));
        MscclPrograms programs = MscclRanks.load("reference/allreduce_rdh_4gpu_simple.xml",
                "reference/alltoall_allpairs_4gpu_simple.xml");
        MpConfig ucx = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(shm)
                .withTransport(Transport.UCX));
        MscclRanks.run(4, ucx, programs, MscclConfig.defaults().withSlotBytes(512), (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            int me = comm.rank();
            long count = 4 * 300;
            MemorySegment a = mp.allocate(4 * count);
            MemorySegment b = mp.allocate(4 * count);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            // The two programs alternate: a region's sender changes from call to call (the window's reuse rule).
            for (int round = 0; round < 8; round++) {
                fill(a, me, round, 0, count);
                assertTrue(rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM).isPresent());
                assertNull(rt.lastHostRun().direct, "UCX: the put path");
                for (long i = 0; i < count; i++) {
                    int want = 0;
                    for (int r = 0; r < 4; r++) {
                        want += in(r, round, i);
                    }
                    assertEquals(want, a.getAtIndex(ValueLayout.JAVA_INT, i));
                }
                fill(a, me, round, 0, count);
                assertTrue(rt.alltoall(comm, a, ar, b, br, 300, DataType.INT32).isPresent());
                for (int r = 0; r < 4; r++) {
                    for (long i = 0; i < 300; i++) {
                        assertEquals(in(r, round, me * 300 + i), b.getAtIndex(ValueLayout.JAVA_INT, r * 300 + i));
                    }
                }
            }
        });
    }

    private static void fill(MemorySegment m, int rank, int round, long from, long count) {
        for (long i = 0; i < count; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, in(rank, round, from + i));
        }
    }
}
