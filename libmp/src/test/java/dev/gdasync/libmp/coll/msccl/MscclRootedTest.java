package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.exec.HostKiExecutor;
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

/**
 * Reduce and broadcast blocking (the built-in tree), on a host stream and from the host KI executor (the generated
 * tree programs) on 1, 2, 3 and 5 ranks, every root, in and out of place, 13 int32 elements through 24-byte slots
 * (several tiles): exact on the root, the other ranks' output untouched, the broadcast exact everywhere. Random
 * doubles reduced to every root in the three forms give the same bits (the combine order depends on the rank count
 * only). A root outside the communicator is refused.
 */
class MscclRootedTest {
    private static final long COUNT = 13;
    private static final int UNTOUCHED = 0x5a5a5a5a;

    @TempDir
    Path shm;

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 5})
    void reduceAndBroadcastAreExactInEveryFormToEveryRoot(int n) throws Exception {
        MscclRanks.run(n, shm, MscclPrograms.none(), MscclConfig.defaults().withSlotBytes(24), (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            int me = comm.rank();
            MemorySegment a = mp.allocate(8 * COUNT);
            MemorySegment b = mp.allocate(8 * COUNT);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            assertEquals("root " + n + " is outside " + comm + ": ranks are 0.." + (n - 1),
                    assertThrows(IllegalArgumentException.class, () -> rt.reduce(comm, a, ar, b, br, COUNT,
                            DataType.INT32, ReduceOp.SUM, n)).getMessage());
            try (HostStream stream = HostStream.create("caller-" + me); HostKiExecutor ex = KiRanks.executor(mp)) {
                MscclKiLauncher ki = KiRanks.launcher(ex);
                long[] firstBits = null;
                for (int root = 0; root < n; root++) {
                    for (String form : new String[] {"host", "sa", "ki"}) {
                        for (boolean inPlace : new boolean[] {true, false}) {
                            fill(a, me, root);
                            fillWith(b, UNTOUCHED);
                            MemorySegment recv = inPlace ? a : b;
                            MpRegistration recvReg = inPlace ? ar : br;
                            int r0 = root;
                            switch (form) {
                                case "host" -> rt.reduce(comm, a, ar, recv, recvReg, COUNT, DataType.INT32,
                                        ReduceOp.SUM, r0);
                                case "sa" -> rt.reduceOnStream(comm, a, ar, recv, recvReg, COUNT, DataType.INT32,
                                        ReduceOp.SUM, r0, stream);
                                default -> rt.reduceKi(comm, a, ar, recv, recvReg, COUNT, DataType.INT32,
                                        ReduceOp.SUM, r0, ki);
                            }
                            stream.synchronize();
                            String at = form + " reduce to " + root + " in place " + inPlace + " on rank " + me;
                            for (long i = 0; i < COUNT; i++) {
                                int want = 0;
                                for (int r = 0; r < n; r++) {
                                    want += in(r, i, root);
                                }
                                if (me == root) {
                                    assertEquals(want, recv.getAtIndex(ValueLayout.JAVA_INT, i), at + " element " + i);
                                } else {
                                    assertEquals(in(me, i, root), a.getAtIndex(ValueLayout.JAVA_INT, i), at + " input");
                                    assertEquals(UNTOUCHED, b.getAtIndex(ValueLayout.JAVA_INT, i), at + " output");
                                }
                            }
                        }
                        fill(a, me, root + 1);
                        switch (form) {
                            case "host" -> rt.broadcast(comm, a, ar, COUNT, DataType.INT32, root);
                            case "sa" -> rt.broadcastOnStream(comm, a, ar, COUNT, DataType.INT32, root, stream);
                            default -> rt.broadcastKi(comm, a, ar, COUNT, DataType.INT32, root, ki);
                        }
                        stream.synchronize();
                        for (long i = 0; i < COUNT; i++) {
                            assertEquals(in(root, i, root + 1), a.getAtIndex(ValueLayout.JAVA_INT, i),
                                    form + " broadcast from " + root + " on rank " + me + " element " + i);
                        }
                        // Random doubles: the same bits to every root and in every form.
                        Random rnd = new Random(me * 31L + 7);
                        for (long i = 0; i < COUNT; i++) {
                            a.setAtIndex(ValueLayout.JAVA_DOUBLE, i, rnd.nextDouble() * 1e6 - 5e5);
                        }
                        switch (form) {
                            case "host" -> rt.reduce(comm, a, ar, b, br, COUNT, DataType.FLOAT64, ReduceOp.SUM, root);
                            case "sa" -> rt.reduceOnStream(comm, a, ar, b, br, COUNT, DataType.FLOAT64, ReduceOp.SUM,
                                    root, stream);
                            default -> rt.reduceKi(comm, a, ar, b, br, COUNT, DataType.FLOAT64, ReduceOp.SUM, root,
                                    ki);
                        }
                        stream.synchronize();
                        // The root broadcasts its bits; every rank compares with the first result it saw.
                        rt.broadcast(comm, b, br, COUNT, DataType.INT64, root);
                        long[] bits = b.asSlice(0, 8 * COUNT).toArray(ValueLayout.JAVA_LONG);
                        if (firstBits == null) {
                            firstBits = bits;
                        }
                        for (int i = 0; i < COUNT; i++) {
                            assertEquals(firstBits[i], bits[i], form + " float reduce to " + root + " element " + i);
                        }
                    }
                }
            }
            mp.deregister(ar);
            mp.deregister(br);
            mp.free(a);
            mp.free(b);
        });
    }

    static int in(int rank, long i, int round) {
        return rank * 1000 + (int) i * 7 - 40 + round * 100_000;
    }

    private static void fill(MemorySegment m, int rank, int round) {
        for (long i = 0; i < COUNT; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, in(rank, i, round));
        }
    }

    private static void fillWith(MemorySegment m, int v) {
        for (long i = 0; i < COUNT; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, v);
        }
    }
}
