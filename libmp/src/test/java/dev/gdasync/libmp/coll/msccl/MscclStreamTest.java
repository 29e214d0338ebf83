package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The stream (SA) interpreter: the four msccl-tools programs on 4 ranks with int32 data, enqueued on a host stream
 * after a slow task that writes the input (so a run that did not wait for it would read stale data), exact on every
 * rank with slots of 8 B, 200 B and 64 KiB (one element per tile, several, the whole chunk), then twice blocking
 * and once more on the stream, each with new data (the repeated calls skip the agreement, so runs of both forms
 * follow each other without a barrier); a count outside the program falls back and is exact; a dependency cycle is
 * refused before anything is enqueued; a peer that does not take part fails the stream with a timeout naming rank,
 * thread block and step.
 */
class MscclStreamTest {

    @TempDir
    Path shm;
    @TempDir
    Path dir;

    static int in(int rank, long i, int round) {
        return rank * 100_000 + (int) i * 3 + 1 + round * 7;
    }

    @ParameterizedTest(name = "{0}, {1} B slots")
    @MethodSource("dev.gdasync.libmp.coll.msccl.MscclRanks#referenceCases")
    void exactResultOnEveryRankOnAStream(String file, int slotBytes) throws Exception {
        MscclPrograms programs = MscclRanks.load("reference/" + file);
        MscclProgram program = programs.programs().get(0);
        int n = 4;
        MscclRanks.run(n, shm, programs, MscclConfig.defaults().withSlotBytes(slotBytes), (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            int me = comm.rank();
            try (HostStream stream = HostStream.create("caller-" + me)) {
                // 4 chunks of 37 elements (odd: several tiles): on the stream, twice blocking, on the stream again
                // (the repeats skip the agreement); then a count that does not divide. {per, round, on stream}
                long[][] rounds = {{37, 0, 1}, {37, 1, 0}, {37, 2, 0}, {37, 3, 1}, {3, 4, 1}};
                for (long[] round : rounds) {
                    long per = round[0];
                    int k = (int) round[1];
                    HostStream on = round[2] == 1 ? stream : null;
                    long count = per == 37 ? 4 * per : 4 * per + 1;
                    MemorySegment a = mp.allocate(4 * count * n);
                    MemorySegment b = mp.allocate(4 * count * n);
                    MpRegistration ar = mp.register(a);
                    MpRegistration br = mp.register(b);
                    Optional<MscclProgram> ran;
                    long c = count / 4;
                    switch (program.collective()) {
                        case ALLREDUCE -> {
                            slowFill(stream, a, me, count, k, on == null);
                            ran = on == null ? rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM)
                                    : rt.allreduceOnStream(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM, on);
                            stream.synchronize();
                            for (long i = 0; i < count; i++) {
                                long want = 0;
                                for (int r = 0; r < n; r++) {
                                    want += in(r, i, k);
                                }
                                assertEquals((int) want, a.getAtIndex(ValueLayout.JAVA_INT, i), "element " + i);
                            }
                        }
                        case ALLGATHER -> {
                            slowFill(stream, b.asSlice(me * c * 4), me, c, k, on == null);
                            ran = on == null ? rt.allgather(comm, b.asSlice(me * c * 4, c * 4), br, b, br, c,
                                    DataType.INT32) : rt.allgatherOnStream(comm, b.asSlice(me * c * 4, c * 4), br, b,
                                    br, c, DataType.INT32, on);
                            stream.synchronize();
                            for (int r = 0; r < n; r++) {
                                for (long i = 0; i < c; i++) {
                                    assertEquals(in(r, i, k), b.getAtIndex(ValueLayout.JAVA_INT, r * c + i));
                                }
                            }
                        }
                        case ALLTOALL -> {
                            slowFill(stream, a, me, c * n, k, on == null);
                            ran = on == null ? rt.alltoall(comm, a, ar, b, br, c, DataType.INT32)
                                    : rt.alltoallOnStream(comm, a, ar, b, br, c, DataType.INT32, on);
                            stream.synchronize();
                            for (int r = 0; r < n; r++) {
                                for (long i = 0; i < c; i++) {
                                    assertEquals(in(r, me * c + i, k), b.getAtIndex(ValueLayout.JAVA_INT, r * c + i),
                                            "from rank " + r + " element " + i);
                                }
                            }
                        }
                        default -> throw new AssertionError(program.collective());
                    }
                    boolean expectProgram = per == 37 || program.collective() != Collective.ALLREDUCE;
                    assertEquals(expectProgram, ran.isPresent(), "selection for count " + count);
                    mp.deregister(ar);
                    mp.deregister(br);
                    mp.free(a);
                    mp.free(b);
                }
            }
        });
    }

    /**
     * Writes the input from a task of the stream that first sleeps: a run on the stream must wait for it; before a
     * blocking call the CPU waits for the stream.
     */
    private static void slowFill(HostStream stream, MemorySegment m, int rank, long count, int round,
                                 boolean blockingCall) {
        stream.launch(() -> {
            try {
                Thread.sleep(30);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (long i = 0; i < count; i++) {
                m.setAtIndex(ValueLayout.JAVA_INT, i, in(rank, i, round));
            }
        });
        if (blockingCall) {
            stream.synchronize();
        }
    }

    @Test
    void aCycleIsRefusedBeforeAnythingIsEnqueued() throws Exception {
        MscclPrograms programs = MscclPrograms.load(List.of(IrGenerator.write(dir, "cycle.xml", IrGenerator.cycle(2))),
                MscclLimits.defaults());
        MscclRanks.run(2, shm, programs, MscclConfig.defaults(), (coll, rt) -> {
            Mp mp = coll.mp();
            MemorySegment a = mp.allocate(64);
            MpRegistration ar = mp.register(a);
            Communicator comm = coll.world();
            try (HostStream stream = HostStream.create("caller-" + comm.rank())) {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> rt.allreduceOnStream(comm, a, ar, a, ar, 4, DataType.INT32, ReduceOp.SUM, stream));
                String m = e.getMessage();
                assertTrue(m.contains("MSCCL program 'cycle'") && m.contains("nothing was enqueued"), m);
                assertTrue(m.contains("rank 0 tb 0 step 0 (nop, tile 0 of 1) waits for tb 1 step 0"), m);
                stream.synchronize();
            }
        });
    }

    @Test
    void aPeerThatDoesNotTakePartFailsTheStreamNamingRankBlockAndStep() throws Exception {
        MscclPrograms programs = MscclPrograms.load(List.of(IrGenerator.write(dir, "ring.xml",
                IrGenerator.ringAllreduce(2, 1, ""))), MscclLimits.defaults());
        MscclConfig config = MscclConfig.defaults().withTimeout(Duration.ofMillis(800));
        MscclRanks.run(2, shm, programs, config, (coll, rt) -> {
            Mp mp = coll.mp();
            MemorySegment a = mp.allocate(4 * 64);
            MpRegistration ar = mp.register(a);
            Communicator comm = coll.world();
            try (HostStream stream = HostStream.create("caller-" + comm.rank())) {
                assertTrue(rt.allreduceOnStream(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM, stream)
                        .isPresent());
                stream.synchronize();
                if (comm.rank() == 0) {
                    // Rank 1 does not call again: rank 0's run waits for its messages and times out.
                    rt.allreduceOnStream(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM, stream);
                    RuntimeException e = assertThrows(RuntimeException.class, stream::synchronize);
                    StringBuilder all = new StringBuilder();
                    for (Throwable t = e; t != null; t = t.getCause()) {
                        all.append(t.getMessage()).append(" | ");
                    }
                    String m = all.toString();
                    assertTrue(m.contains("timed out") && m.contains("rank 0 tb 0 step "), m);
                    IllegalStateException again = assertThrows(IllegalStateException.class,
                            () -> rt.allreduceOnStream(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM,
                                    HostStream.create("other")));
                    assertTrue(again.getMessage().startsWith("an earlier run failed"), again.getMessage());
                }
            }
        });
    }
}
