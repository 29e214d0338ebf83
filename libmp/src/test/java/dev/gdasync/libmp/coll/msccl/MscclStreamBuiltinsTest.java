package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The built-ins on a stream (no program loaded: the generated all-pairs programs) on 1, 2, 3 and 5 ranks with odd
 * counts and 24-byte slots (several tiles): allreduce in and out of place (int32 SUM and MAX, int64 PROD), the
 * reduce-scatter in place, allgather and alltoall exact on every rank, and a float64 allreduce whose result has the
 * same bits on every rank. A closed stream is refused before anything happens.
 */
class MscclStreamBuiltinsTest {
    @TempDir
    Path shm;

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 5})
    void builtinsOnAStreamAreExact(int n) throws Exception {
        MscclConfig config = MscclConfig.defaults().withSlotBytes(24);
        MscclRanks.run(n, shm, MscclPrograms.none(), config, (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            int me = comm.rank();
            long count = 13;
            MemorySegment a = mp.allocate(8 * count * n);
            MemorySegment b = mp.allocate(8 * count * n);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            HostStream closed = HostStream.create("closed-" + me);
            closed.close();
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> rt.allreduceOnStream(
                    comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM, closed));
            assertEquals("stream closed-" + me + " is closed or failed", refused.getMessage());
            try (HostStream stream = HostStream.create("caller-" + me)) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.MAX}) {
                    for (boolean inPlace : new boolean[] {true, false}) {
                        fillInts(a, me, count * n);
                        assertTrue(rt.allreduceOnStream(comm, a, ar, inPlace ? a : b, inPlace ? ar : br, count,
                                DataType.INT32, op, stream).isEmpty());
                        stream.synchronize();
                        for (long i = 0; i < count; i++) {
                            int want = op == ReduceOp.SUM ? 0 : Integer.MIN_VALUE;
                            for (int r = 0; r < n; r++) {
                                want = op == ReduceOp.SUM ? want + in(r, i) : Math.max(want, in(r, i));
                            }
                            assertEquals(want, (inPlace ? a : b).getAtIndex(ValueLayout.JAVA_INT, i),
                                    op + " in place " + inPlace + " element " + i);
                        }
                    }
                }
                for (long i = 0; i < count; i++) {
                    a.setAtIndex(ValueLayout.JAVA_LONG, i, me + 2 + i % 3);
                }
                rt.allreduceOnStream(comm, a, ar, b, br, count, DataType.INT64, ReduceOp.PROD, stream);
                stream.synchronize();
                for (long i = 0; i < count; i++) {
                    long want = 1;
                    for (int r = 0; r < n; r++) {
                        want *= r + 2 + i % 3;
                    }
                    assertEquals(want, b.getAtIndex(ValueLayout.JAVA_LONG, i), "prod element " + i);
                }
                // Reduce-scatter in place: the result is this rank's block of the input.
                fillInts(a, me, count * n);
                rt.reduceScatterOnStream(comm, a, ar, a.asSlice(4 * me * count, 4 * count), ar, count,
                        DataType.INT32, ReduceOp.SUM, stream);
                stream.synchronize();
                for (long i = 0; i < count; i++) {
                    int want = 0;
                    for (int r = 0; r < n; r++) {
                        want += in(r, me * count + i);
                    }
                    assertEquals(want, a.getAtIndex(ValueLayout.JAVA_INT, me * count + i), "rs element " + i);
                }
                fillInts(a, me, count);
                rt.allgatherOnStream(comm, a.asSlice(0, 4 * count), ar, b, br, count, DataType.INT32, stream);
                stream.synchronize();
                for (int r = 0; r < n; r++) {
                    for (long i = 0; i < count; i++) {
                        assertEquals(in(r, i), b.getAtIndex(ValueLayout.JAVA_INT, r * count + i), "ag");
                    }
                }
                fillInts(a, me, count * n);
                rt.alltoallOnStream(comm, a, ar, b, br, count, DataType.INT32, stream);
                stream.synchronize();
                for (int r = 0; r < n; r++) {
                    for (long i = 0; i < count; i++) {
                        assertEquals(in(r, me * count + i), b.getAtIndex(ValueLayout.JAVA_INT, r * count + i), "a2a");
                    }
                }
                // Random doubles: the same bits everywhere (rank order of the reduction is fixed).
                Random rnd = new Random(me * 31L + 7);
                for (long i = 0; i < count; i++) {
                    a.setAtIndex(ValueLayout.JAVA_DOUBLE, i, rnd.nextDouble() * 1e6 - 5e5);
                }
                rt.allreduceOnStream(comm, a, ar, a, ar, count, DataType.FLOAT64, ReduceOp.SUM, stream);
                stream.synchronize();
                MscclRanks.assertSameBitsEverywhere(rt, comm, a, ar, count);
            }
            mp.deregister(ar);
            mp.deregister(br);
            mp.free(a);
            mp.free(b);
        });
    }

    static int in(int rank, long i) {
        return rank * 1000 + (int) i * 7 - 40;
    }

    private static void fillInts(MemorySegment m, int rank, long count) {
        for (long i = 0; i < count; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, in(rank, i));
        }
    }
}
