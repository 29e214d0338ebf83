package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The four msccl-tools programs on 4 ranks with int32 data give the exact collective on every rank, with three
 * tile sizes (slots of 8 B, 200 B and 64 KiB: one element per tile, several, the whole chunk), with a thread per
 * thread block and with all blocks on the caller's thread; counts that do not divide into the program's chunks fall
 * back to the built-in algorithm and are still right.
 */
class MscclReferenceProgramsTest {
    private static final String[] PROGRAMS = {"allreduce_ring_4gpu_simple.xml", "allreduce_rdh_4gpu_simple.xml",
            "allgather_ring_4gpu_simple.xml", "alltoall_allpairs_4gpu_simple.xml"};

    @TempDir
    Path shm;

    static Stream<Arguments> cases() {
        List<Arguments> a = new ArrayList<>();
        for (String p : PROGRAMS) {
            for (int slot : new int[] {8, 200, 64 * 1024}) {
                a.add(Arguments.of(p, slot, slot != 200));
            }
        }
        return a.stream();
    }

    static int in(int rank, long i) {
        return rank * 100_000 + (int) i * 3 + 1;
    }

    @ParameterizedTest(name = "{0}, {1} B slots, threads {2}")
    @MethodSource("cases")
    void exactResultOnEveryRank(String file, int slotBytes, boolean threads) throws Exception {
        MscclPrograms programs = MscclRanks.load("reference/" + file);
        MscclProgram program = programs.programs().get(0);
        MscclConfig config = MscclConfig.defaults().withSlotBytes(slotBytes).withThreads(threads);
        int n = 4;
        MscclRanks.run(n, shm, programs, config, (coll, rt) -> {
            Mp mp = coll.mp();
            var comm = coll.world();
            int me = comm.rank();
            // 4 chunks of 257 elements (odd, several tiles), then a count that does not divide: the built-in.
            for (long per : new long[] {257, 3}) {
                boolean divisible = per == 257;
                long count = divisible ? 4 * per : 4 * per + 1;
                MemorySegment a = mp.allocate(4 * count * n);
                MemorySegment b = mp.allocate(4 * count * n);
                MpRegistration ar = mp.register(a);
                MpRegistration br = mp.register(b);
                Optional<MscclProgram> ran;
                switch (program.collective()) {
                    case ALLREDUCE -> {
                        fill(a, me, 0, count);
                        ran = rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM);
                        for (long i = 0; i < count; i++) {
                            long want = 0;
                            for (int r = 0; r < n; r++) {
                                want += in(r, i);
                            }
                            assertEquals((int) want, a.getAtIndex(ValueLayout.JAVA_INT, i), "element " + i);
                        }
                    }
                    case ALLGATHER -> {
                        // In place: this rank's block already sits at rank · count of the output.
                        long c = count / 4;
                        fill(b.asSlice(me * c * 4), me, 0, c);
                        ran = rt.allgather(comm, b.asSlice(me * c * 4, c * 4), br, b, br, c, DataType.INT32);
                        for (int r = 0; r < n; r++) {
                            for (long i = 0; i < c; i++) {
                                assertEquals(in(r, i), b.getAtIndex(ValueLayout.JAVA_INT, r * c + i));
                            }
                        }
                    }
                    case ALLTOALL -> {
                        long c = count / 4;
                        fill(a, me, 0, c * n);
                        ran = rt.alltoall(comm, a, ar, b, br, c, DataType.INT32);
                        for (int r = 0; r < n; r++) {
                            for (long i = 0; i < c; i++) {
                                assertEquals(in(r, me * c + i), b.getAtIndex(ValueLayout.JAVA_INT, r * c + i),
                                        "from rank " + r + " element " + i);
                            }
                        }
                    }
                    default -> throw new AssertionError(program.collective());
                }
                // 13 elements do not divide into allreduce's 4 chunks; allgather and alltoall take 3 per rank (12).
                boolean expectProgram = divisible || program.collective() != Collective.ALLREDUCE;
                assertEquals(expectProgram, ran.isPresent(), "selection for count " + count);
                mp.deregister(ar);
                mp.deregister(br);
                mp.free(a);
                mp.free(b);
            }
        });
    }

    private static void fill(MemorySegment m, int rank, long from, long count) {
        for (long i = 0; i < count; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, in(rank, from + i));
        }
    }
}
