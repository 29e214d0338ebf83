package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.testutil.CollChecks;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static dev.gdasync.libmp.coll.CollRanks.pattern;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every collective of the host engine equals a plain reference byte for byte, for 2–8 ranks and 1 B … 4 MiB. */
class CollectivesTest {
    private static final long MIB4 = 4L << 20;

    @TempDir
    Path shm;

    /** Ranks 2…8 at small and medium sizes; 4 MiB messages at 2 and 4 ranks (one JVM holds every rank's buffers). */
    static Stream<Arguments> matrix() {
        List<Arguments> a = new ArrayList<>();
        for (int n = 2; n <= 8; n++) {
            a.add(Arguments.of(n, 1L));
            a.add(Arguments.of(n, 4099L));
        }
        a.add(Arguments.of(3, 65_536L + 5));
        a.add(Arguments.of(2, MIB4));
        a.add(Arguments.of(4, MIB4));
        return a.stream();
    }

    @ParameterizedTest(name = "{0} ranks, {1} bytes")
    @MethodSource("matrix")
    void alltoallAllgatherBcastEqualTheReference(int n, long bytes) throws Exception {
        CollRanks.run(n, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            MemorySegment send = mp.allocate(n * bytes);
            MemorySegment recv = mp.allocate(n * bytes);
            MpRegistration sr = mp.register(send);
            MpRegistration rr = mp.register(recv);
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < bytes; i++) {
                    send.set(ValueLayout.JAVA_BYTE, j * bytes + i, pattern(me, j, i, 1));
                }
            }
            // Non-blocking alltoall, progressed by test only.
            CollRequest r = world.ialltoall(send, sr, recv, rr, bytes);
            while (!world.test(r)) {
                Thread.yield();
            }
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < bytes; i++) {
                    assertEquals(pattern(j, me, i, 1), recv.get(ValueLayout.JAVA_BYTE, j * bytes + i),
                            "alltoall block from " + j + " byte " + i);
                }
            }
            // Allgather of the first block.
            MemorySegment mine = send.asSlice(0, bytes);
            world.allgather(mine, sr, recv, rr);
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < bytes; i++) {
                    assertEquals(pattern(j, 0, i, 1), recv.get(ValueLayout.JAVA_BYTE, j * bytes + i),
                            "allgather block of " + j + " byte " + i);
                }
            }
            // Broadcast from every root in turn.
            for (int root = 0; root < n; root++) {
                MemorySegment buf = recv.asSlice(0, bytes);
                for (long i = 0; i < bytes; i++) {
                    buf.set(ValueLayout.JAVA_BYTE, i, me == root ? pattern(root, 99, i, 2) : 0);
                }
                world.bcast(buf, rr, root);
                for (long i = 0; i < bytes; i++) {
                    assertEquals(pattern(root, 99, i, 2), buf.get(ValueLayout.JAVA_BYTE, i), "bcast from " + root + " byte " + i);
                }
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks")
    @MethodSource("rankCounts")
    void alltoallvWithUnevenCountsEqualsTheReference(int n) throws Exception {
        CollRanks.run(n, shm, coll -> CollChecks.unevenAlltoallv(coll.mp(), coll.world(), 70_000));
    }

    static Stream<Integer> rankCounts() {
        return Stream.of(2, 3, 4, 5, 6, 7, 8);
    }
}
