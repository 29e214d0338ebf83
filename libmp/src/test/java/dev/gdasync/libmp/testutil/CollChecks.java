package dev.gdasync.libmp.testutil;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.CollRequest;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.Group;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Collective checks shared by the in-JVM tests and the launcher tests' rank ({@link CollRankMain}): each posts a
 * collective, lets it finish and compares the bytes with a reference pattern, throwing {@link AssertionError}. With
 * {@code computeFirst} (the offload engine) the rank first computes, calling nothing, until its receive buffer holds
 * the reference: proof that the proxy alone moved the bytes.
 */
public final class CollChecks {
    private static final long FILL_DEADLINE_NANOS = 30_000_000_000L;

    private CollChecks() {
    }

    /** @return the reference content of the byte at {@code i} of what {@code from} sends {@code to} */
    public static byte pattern(int from, int to, long i, int salt) {
        return (byte) (from * 31 + to * 7 + i * 13 + (i >>> 8) + salt);
    }

    /**
     * Alltoall, allgather (of block 0) and bcast from every root, {@code bytes} per block.
     *
     * @param computeFirst compute without library calls until each receive buffer is full, before the wait
     */
    public static void alltoallAllgatherBcast(Mp mp, Communicator world, long bytes, boolean computeFirst) {
        int me = world.rank();
        int n = world.size();
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
        finish(world, world.ialltoall(send, sr, recv, rr, bytes), recv, expect, computeFirst, "ialltoall " + bytes);
        for (int j = 0; j < n; j++) {
            for (long i = 0; i < bytes; i++) {
                expect[(int) (j * bytes + i)] = pattern(j, 0, i, 1);
            }
        }
        recv.fill((byte) 0);
        finish(world, world.iallgather(send.asSlice(0, bytes), sr, recv, rr), recv, expect, computeFirst,
                "iallgather " + bytes);
        byte[] b = new byte[(int) bytes];
        for (int root = 0; root < n; root++) {
            MemorySegment buf = recv.asSlice(0, bytes);
            for (long i = 0; i < bytes; i++) {
                b[(int) i] = pattern(root, 99, i, 2);
                buf.set(ValueLayout.JAVA_BYTE, i, me == root ? b[(int) i] : 0);
            }
            finish(world, world.ibcast(buf, rr, root), buf, b, computeFirst, "ibcast " + bytes + " from " + root);
        }
        // Nobody refills buffers a peer's collective may still read: one more collective orders them.
        world.allgather(send.asSlice(0, 1), sr, recv.asSlice(0, n), rr);
        mp.deregister(sr);
        mp.deregister(rr);
        mp.free(send);
        mp.free(recv);
    }

    /**
     * Every collective of the communicator on each side of every switch point of the shared-memory path (the header's
     * 40 inline bytes, the 64 KiB slot, the 8 KiB small reductions), each result compared exactly: bcast from every
     * root, allgather, alltoall, barrier, and int64 allreduce, reduce to every root and reduce-scatter.
     */
    public static void everySwitch(Mp mp, Communicator world) {
        for (long bytes : new long[] {1, 40, 41, 65_536, 65_537}) {
            alltoallAllgatherBcast(mp, world, bytes, false);
        }
        world.barrier();
        int me = world.rank();
        int n = world.size();
        long most = 9_000L * n;
        MemorySegment a = mp.allocate(8 * most);
        MemorySegment b = mp.allocate(8 * most);
        MpRegistration ar = mp.register(a);
        MpRegistration br = mp.register(b);
        for (long count : new long[] {5, 6, 1024, 1025, 9_000}) {
            for (long i = 0; i < count * n; i++) {
                a.setAtIndex(ValueLayout.JAVA_LONG, i, me * 1_000_003L + i * 17);
            }
            world.allreduce(a, ar, b, br, count, DataType.INT64, ReduceOp.SUM);
            expectSums(b, count, n, 0, "allreduce " + count);
            for (int root = 0; root < n; root++) {
                b.fill((byte) 0);
                world.reduce(a, ar, b, br, count, DataType.INT64, ReduceOp.SUM, root);
                if (me == root) {
                    expectSums(b, count, n, 0, "reduce " + count + " to " + root);
                }
            }
            world.reduceScatter(a, ar, b, br, count, DataType.INT64, ReduceOp.SUM);
            expectSums(b, count, n, me * count, "reduceScatter " + count);
        }
        world.barrier();
        mp.deregister(ar);
        mp.deregister(br);
        mp.free(a);
        mp.free(b);
    }

    private static void expectSums(MemorySegment got, long count, int n, long from, String what) {
        for (long i = 0; i < count; i++) {
            long want = 0;
            for (int r = 0; r < n; r++) {
                want += r * 1_000_003L + (from + i) * 17;
            }
            require(want == got.getAtIndex(ValueLayout.JAVA_LONG, i), what + " element " + i + ": want " + want
                    + " got " + got.getAtIndex(ValueLayout.JAVA_LONG, i));
        }
    }

    /** A ring broadcast from rank 0 as one group: rank r receives from r − 1 and forwards to r + 1. */
    public static void ringBroadcast(Mp mp, Communicator world, long bytes, boolean computeFirst) {
        int me = world.rank();
        int n = world.size();
        MemorySegment buf = mp.allocate(bytes);
        MpRegistration reg = mp.register(buf);
        byte[] expect = new byte[(int) bytes];
        for (long i = 0; i < bytes; i++) {
            expect[(int) i] = pattern(0, 42, i, 5);
            buf.set(ValueLayout.JAVA_BYTE, i, me == 0 ? expect[(int) i] : 0);
        }
        Group g = world.groupStart();
        if (me == 0) {
            g.send(buf, reg, 1);
        } else {
            int got = g.recv(buf, reg, me - 1);
            if (me + 1 < n) {
                g.send(buf, reg, me + 1, got);
            }
        }
        g.groupEnd();
        finish(world, g.groupCall(), buf, expect, computeFirst, "ring broadcast " + bytes);
    }

    /** Alltoallv where some pairs exchange nothing and others up to {@code most} bytes; gaps stay untouched. */
    public static void unevenAlltoallv(Mp mp, Communicator world, long most) {
        int me = world.rank();
        int n = world.size();
        long[] sc = new long[n];
        long[] sd = new long[n];
        long[] rc = new long[n];
        long[] rd = new long[n];
        long s = 0;
        long r = 0;
        for (int j = n - 1; j >= 0; j--) {
            sc[j] = count(me, j, most);
            rc[j] = count(j, me, most);
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
                require(pattern(j, me, i, 3) == recv.get(ValueLayout.JAVA_BYTE, rd[j] + i), "alltoallv from " + j + " byte " + i);
            }
            for (long i = rc[j]; i < rc[j] + 5; i++) {
                require(recv.get(ValueLayout.JAVA_BYTE, rd[j] + i) == 0x5A, "alltoallv gap after block " + j + " untouched");
            }
        }
    }

    private static long count(int from, int to, long most) {
        return (from + to) % 3 == 0 ? 0 : 1 + (from * 5 + to * 11) * 7777L % most;
    }

    private static void finish(Communicator world, CollRequest r, MemorySegment buf, byte[] expect, boolean computeFirst,
                               String what) {
        MemorySegment want = MemorySegment.ofArray(expect);
        if (computeFirst) {
            long start = System.nanoTime();
            double sink = 0;
            while (buf.asSlice(0, expect.length).mismatch(want) >= 0) {
                for (int i = 0; i < 1000; i++) {
                    sink += Math.sqrt(i + sink);
                }
                Thread.yield();
                require(System.nanoTime() - start < FILL_DEADLINE_NANOS, what + ": the proxy did not fill the receive buffer"
                        + " within 30 s while the rank computed without calling test (" + sink + ")");
            }
        }
        world.wait(r);
        long at = buf.asSlice(0, expect.length).mismatch(want);
        require(at < 0, what + ": byte " + at + " differs from the reference");
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
