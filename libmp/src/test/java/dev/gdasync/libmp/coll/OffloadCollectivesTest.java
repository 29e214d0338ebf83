package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import org.junit.jupiter.api.Test;
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
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every collective on the offload engine equals the reference byte for byte, for 2–8 ranks and 1 B … 4 MiB, while
 * the caller computes and never calls test: the proxy alone moves the bytes (the receive buffers fill up before the
 * first test), and the final wait only reads the done word.
 */
class OffloadCollectivesTest {
    private static final long MIB4 = 4L << 20;
    private static final long FILL_DEADLINE_NANOS = 30_000_000_000L;

    @TempDir
    Path shm;

    /** Both sides of the staging threshold (8 KiB) and of the transit chunk (256 KiB). */
    static Stream<Arguments> matrix() {
        List<Arguments> a = new ArrayList<>();
        for (int n = 2; n <= 8; n++) {
            a.add(Arguments.of(n, 1L));
            a.add(Arguments.of(n, 9000L));
        }
        a.add(Arguments.of(3, 300_000L + 5));
        a.add(Arguments.of(2, MIB4));
        a.add(Arguments.of(4, MIB4));
        return a.stream();
    }

    @ParameterizedTest(name = "{0} ranks, {1} bytes")
    @MethodSource("matrix")
    void collectivesFinishWithoutTestAndEqualTheReference(int n, long bytes) throws Exception {
        CollRanks.runOffload(n, shm, coll -> {
            assertTrue(coll.offloaded());
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            MemorySegment send = mp.allocate(n * bytes);
            MemorySegment recv = mp.allocate(n * bytes);
            MpRegistration sr = mp.register(send);
            MpRegistration rr = mp.register(recv);
            byte[] expect = new byte[(int) (n * bytes)];
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < bytes; i++) {
                    send.set(ValueLayout.JAVA_BYTE, j * bytes + i, pattern(me, j, i, 1));
                    expect[(int) (j * bytes + i)] = pattern(j, me, i, 1);
                }
            }
            CollRequest r = world.ialltoall(send, sr, recv, rr, bytes);
            computeUntilEqual(recv, expect, "ialltoall");
            world.wait(r);

            MemorySegment mine = send.asSlice(0, bytes);
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < bytes; i++) {
                    expect[(int) (j * bytes + i)] = pattern(j, 0, i, 1);
                }
            }
            recv.fill((byte) 0);
            r = world.iallgather(mine, sr, recv, rr);
            computeUntilEqual(recv, expect, "iallgather");
            world.wait(r);

            byte[] bexpect = new byte[(int) bytes];
            for (int root = 0; root < n; root++) {
                MemorySegment buf = recv.asSlice(0, bytes);
                for (long i = 0; i < bytes; i++) {
                    bexpect[(int) i] = pattern(root, 99, i, 2);
                    buf.set(ValueLayout.JAVA_BYTE, i, me == root ? bexpect[(int) i] : 0);
                }
                r = world.ibcast(buf, rr, root);
                computeUntilEqual(buf, bexpect, "ibcast from " + root);
                world.wait(r);
            }
            // A barrier of sorts: nobody refills its buffers while a peer's collective may still read them.
            world.allgather(mine, sr, recv, rr);
        });
    }

    @Test
    void alltoallvWithUnevenCountsEqualsTheReference() throws Exception {
        int n = 5;
        CollRanks.runOffload(n, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            long[] sc = new long[n];
            long[] sd = new long[n];
            long[] rc = new long[n];
            long[] rd = new long[n];
            long s = 0;
            long r = 0;
            for (int j = n - 1; j >= 0; j--) {
                sc[j] = count(me, j);
                rc[j] = count(j, me);
                sd[j] = s;
                s += sc[j] + 3;
                rd[j] = r;
                r += rc[j] + 5;
            }
            MemorySegment send = mp.allocate(s);
            MemorySegment recv = mp.allocate(r);
            MpRegistration sreg = mp.register(send);
            MpRegistration rreg = mp.register(recv);
            recv.fill((byte) 0x5A);
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < sc[j]; i++) {
                    send.set(ValueLayout.JAVA_BYTE, sd[j] + i, pattern(me, j, i, 3));
                }
            }
            world.alltoallv(send, sreg, sc, sd, recv, rreg, rc, rd);
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < rc[j]; i++) {
                    assertEquals(pattern(j, me, i, 3), recv.get(ValueLayout.JAVA_BYTE, rd[j] + i), "from " + j + " byte " + i);
                }
                for (long i = rc[j]; i < rc[j] + 5; i++) {
                    assertEquals((byte) 0x5A, recv.get(ValueLayout.JAVA_BYTE, rd[j] + i), "gap after block " + j + " untouched");
                }
            }
        });
    }

    /** Some pairs exchange nothing, others up to ~600 KB (several transit chunks). */
    private static long count(int from, int to) {
        return (from + to) % 3 == 0 ? 0 : 1 + (from * 5 + to * 11) * 7777L % 600_000;
    }

    /** Computes (no library call) until the buffer holds what is expected; fails after the deadline. */
    static void computeUntilEqual(MemorySegment buf, byte[] expect, String what) {
        MemorySegment want = MemorySegment.ofArray(expect);
        long start = System.nanoTime();
        double sink = 0;
        while (buf.asSlice(0, expect.length).mismatch(want) >= 0) {
            for (int i = 0; i < 2000; i++) {
                sink += Math.sqrt(i + sink);
            }
            Thread.yield();
            if (System.nanoTime() - start > FILL_DEADLINE_NANOS) {
                fail(what + ": the proxy did not fill the receive buffer within 30 s while the rank computed (first"
                        + " difference at byte " + buf.asSlice(0, expect.length).mismatch(want) + ")" + sink);
            }
        }
    }
}
