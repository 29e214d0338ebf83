package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KI form: each rank's thread blocks run as blocks of its host KI executor over a shmem KI launch (templated
 * puts prepared by the CPU, rung by the blocks). The four msccl-tools programs on 4 ranks with int32 data and slots of
 * 8 B, 200 B and 64 KiB (8 B slots need several launches per run: a run's puts do not fit one), run from the KI
 * executor, then blocking, then from the KI executor again with new data (the repeat skips the agreement), exact on
 * every rank; a count outside the program runs the generated built-in and is exact. The built-ins on 1, 2, 3 and 5
 * ranks (allreduce in and out of place, reduce-scatter in place, allgather, alltoall, float64 bits equal on every
 * rank). A peer that does not take part ends the launch with a timeout naming the PE, thread block and step.
 */
class MscclKiTest {

    @TempDir
    Path shm;
    @TempDir
    Path dir;

    static int in(int rank, long i, int round) {
        return rank * 100_000 + (int) i * 3 + 1 + round * 7;
    }

    @ParameterizedTest(name = "{0}, {1} B slots")
    @MethodSource("dev.gdasync.libmp.coll.msccl.MscclRanks#referenceCases")
    void exactResultOnEveryRankFromTheKiExecutor(String file, int slotBytes) throws Exception {
        MscclPrograms programs = MscclRanks.load("reference/" + file);
        MscclProgram program = programs.programs().get(0);
        int n = 4;
        MscclRanks.run(n, shm, programs, MscclConfig.defaults().withSlotBytes(slotBytes), (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            int me = comm.rank();
            try (HostKiExecutor ex = KiRanks.executor(mp)) {
                MscclKiLauncher ki = KiRanks.launcher(ex);
                // {elements per chunk, round, from the KI executor}; 37 is odd (several tiles), 3 does not divide.
                long[][] rounds = {{37, 0, 1}, {37, 1, 0}, {37, 2, 1}, {3, 3, 1}};
                for (long[] round : rounds) {
                    long per = round[0];
                    int k = (int) round[1];
                    boolean onKi = round[2] == 1;
                    long count = per == 37 ? 4 * per : 4 * per + 1;
                    MemorySegment a = mp.allocate(4 * count * n);
                    MemorySegment b = mp.allocate(4 * count * n);
                    MpRegistration ar = mp.register(a);
                    MpRegistration br = mp.register(b);
                    Optional<MscclProgram> ran;
                    long c = count / 4;
                    switch (program.collective()) {
                        case ALLREDUCE -> {
                            fill(a, me, count, k);
                            ran = onKi ? rt.allreduceKi(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM, ki)
                                    : rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM);
                            for (long i = 0; i < count; i++) {
                                int want = 0;
                                for (int r = 0; r < n; r++) {
                                    want += in(r, i, k);
                                }
                                assertEquals(want, a.getAtIndex(ValueLayout.JAVA_INT, i), "element " + i);
                            }
                        }
                        case ALLGATHER -> {
                            fill(b.asSlice(me * c * 4), me, c, k);
                            MemorySegment mine = b.asSlice(me * c * 4, c * 4);
                            ran = onKi ? rt.allgatherKi(comm, mine, br, b, br, c, DataType.INT32, ki)
                                    : rt.allgather(comm, mine, br, b, br, c, DataType.INT32);
                            for (int r = 0; r < n; r++) {
                                for (long i = 0; i < c; i++) {
                                    assertEquals(in(r, i, k), b.getAtIndex(ValueLayout.JAVA_INT, r * c + i));
                                }
                            }
                        }
                        case ALLTOALL -> {
                            fill(a, me, c * n, k);
                            ran = onKi ? rt.alltoallKi(comm, a, ar, b, br, c, DataType.INT32, ki)
                                    : rt.alltoall(comm, a, ar, b, br, c, DataType.INT32);
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

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 5})
    void builtinsFromTheKiExecutorAreExact(int n) throws Exception {
        MscclRanks.run(n, shm, MscclPrograms.none(), MscclConfig.defaults().withSlotBytes(24), (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            int me = comm.rank();
            long count = 13;
            MemorySegment a = mp.allocate(8 * count * n);
            MemorySegment b = mp.allocate(8 * count * n);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            try (HostKiExecutor ex = KiRanks.executor(mp)) {
                MscclKiLauncher ki = KiRanks.launcher(ex);
                for (boolean inPlace : new boolean[] {true, false}) {
                    fill(a, me, count * n, 0);
                    assertTrue(rt.allreduceKi(comm, a, ar, inPlace ? a : b, inPlace ? ar : br, count, DataType.INT32,
                            ReduceOp.MAX, ki).isEmpty());
                    for (long i = 0; i < count; i++) {
                        assertEquals(in(n - 1, i, 0), (inPlace ? a : b).getAtIndex(ValueLayout.JAVA_INT, i), "max");
                    }
                }
                fill(a, me, count * n, 1);
                rt.reduceScatterKi(comm, a, ar, a.asSlice(4 * me * count, 4 * count), ar, count, DataType.INT32,
                        ReduceOp.SUM, ki);
                for (long i = 0; i < count; i++) {
                    int want = 0;
                    for (int r = 0; r < n; r++) {
                        want += in(r, me * count + i, 1);
                    }
                    assertEquals(want, a.getAtIndex(ValueLayout.JAVA_INT, me * count + i), "rs element " + i);
                }
                fill(a, me, count, 2);
                rt.allgatherKi(comm, a.asSlice(0, 4 * count), ar, b, br, count, DataType.INT32, ki);
                for (int r = 0; r < n; r++) {
                    for (long i = 0; i < count; i++) {
                        assertEquals(in(r, i, 2), b.getAtIndex(ValueLayout.JAVA_INT, r * count + i), "ag");
                    }
                }
                fill(a, me, count * n, 3);
                rt.alltoallKi(comm, a, ar, b, br, count, DataType.INT32, ki);
                for (int r = 0; r < n; r++) {
                    for (long i = 0; i < count; i++) {
                        assertEquals(in(r, me * count + i, 3), b.getAtIndex(ValueLayout.JAVA_INT, r * count + i),
                                "a2a");
                    }
                }
                Random rnd = new Random(me * 31L + 7);
                for (long i = 0; i < count; i++) {
                    a.setAtIndex(ValueLayout.JAVA_DOUBLE, i, rnd.nextDouble() * 1e6 - 5e5);
                }
                rt.allreduceKi(comm, a, ar, a, ar, count, DataType.FLOAT64, ReduceOp.SUM, ki);
                MscclRanks.assertSameBitsEverywhere(rt, comm, a, ar, count);
            }
            mp.deregister(ar);
            mp.deregister(br);
            mp.free(a);
            mp.free(b);
        });
    }

    @Test
    void aPeerThatDoesNotTakePartEndsTheLaunchNamingRankBlockAndStep() throws Exception {
        MscclPrograms programs = MscclPrograms.load(List.of(IrGenerator.write(dir, "ring.xml",
                IrGenerator.ringAllreduce(2, 1, ""))), MscclLimits.defaults());
        MscclConfig config = MscclConfig.defaults().withTimeout(Duration.ofMillis(800));
        MscclRanks.run(2, shm, programs, config, (coll, rt) -> {
            Mp mp = coll.mp();
            MemorySegment a = mp.allocate(4 * 64);
            MpRegistration ar = mp.register(a);
            Communicator comm = coll.world();
            try (HostKiExecutor ex = KiRanks.executor(mp)) {
                MscclKiLauncher ki = KiRanks.launcher(ex);
                assertTrue(rt.allreduceKi(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM, ki).isPresent());
                if (comm.rank() == 0) {
                    // Rank 1 does not call again: rank 0's blocks wait for its messages and time out.
                    CollectiveException e = assertThrows(CollectiveException.class,
                            () -> rt.allreduceKi(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM, ki));
                    String m = e.getMessage();
                    assertTrue(m.startsWith("rank 0 of ") && m.contains("failed on the KI executor"), m);
                    assertTrue(m.contains("MSCCL PE 0 tb 0 step 1 (rrcs, tile 0 of 1) waiting for message 1 from PE 1: ")
                            && m.contains("timed out"), m);
                    IllegalStateException again = assertThrows(IllegalStateException.class,
                            () -> rt.allreduceKi(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM, ki));
                    assertTrue(again.getMessage().startsWith("an earlier run failed"), again.getMessage());
                }
            }
        });
    }

    private static void fill(MemorySegment m, int rank, long count, int round) {
        for (long i = 0; i < count; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, in(rank, i, round));
        }
    }
}
