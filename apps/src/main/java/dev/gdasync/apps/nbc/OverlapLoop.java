package dev.gdasync.apps.nbc;

import dev.gdasync.apps.common.Medians;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.CollRequest;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.LockSupport;

/**
 * The OSU loops of one collective on one engine: the pure communication time (post and wait), then the overlapped
 * loop: post, a dummy compute as long as the pure time split into slices with a {@code test} after each (or, with no
 * slices, one sleep and no test: an idle CPU), wait. Each column is the median over the iterations. The buffers are checked after every phase, so a wrong result never
 * yields a figure.
 */
final class OverlapLoop {
    private final Mp mp;
    private final Communicator world;
    private final String coll;
    private final long bytes;
    private final MemorySegment send;
    private final MemorySegment recv;
    private final MpRegistration sendReg;
    private final MpRegistration recvReg;
    private final int slices;
    private int posted;

    /**
     * @param slices the busy compute's slices with a test after each; 0: an idle compute (one sleep, no test)
     */
    OverlapLoop(Collectives collectives, String coll, long bytes, int slices) {
        this.mp = collectives.mp();
        this.world = collectives.world();
        this.coll = coll;
        this.bytes = bytes;
        this.slices = slices;
        long n = world.size();
        this.send = mp.allocate(n * bytes);
        this.recv = mp.allocate(n * bytes);
        this.sendReg = mp.register(send);
        this.recvReg = mp.register(recv);
    }

    /** @return the request of one post of the collective, its data stamped with the post's number */
    private CollRequest post() {
        int me = world.rank();
        int stamp = ++posted;
        return switch (coll) {
            case "ialltoall" -> {
                for (int j = 0; j < world.size(); j++) {
                    send.set(ValueLayout.JAVA_BYTE, j * bytes, mark(me, j, stamp));
                }
                yield world.ialltoall(send, sendReg, recv, recvReg, bytes);
            }
            case "iallgather" -> {
                send.set(ValueLayout.JAVA_BYTE, 0, mark(me, 0, stamp));
                yield world.iallgather(send.asSlice(0, bytes), sendReg, recv, recvReg);
            }
            case "ibcast" -> {
                if (me == 0) {
                    recv.set(ValueLayout.JAVA_BYTE, 0, mark(0, 0, stamp));
                }
                yield world.ibcast(recv.asSlice(0, bytes), recvReg, 0);
            }
            default -> throw new IllegalArgumentException("unknown collective " + coll + ": ialltoall, iallgather or ibcast");
        };
    }

    /** Checks the first byte of every block the last post delivered. */
    private void verify() {
        int me = world.rank();
        for (int j = 0; j < world.size(); j++) {
            byte want;
            byte got;
            switch (coll) {
                case "ialltoall" -> {
                    want = mark(j, me, posted);
                    got = recv.get(ValueLayout.JAVA_BYTE, j * bytes);
                }
                case "iallgather" -> {
                    want = mark(j, 0, posted);
                    got = recv.get(ValueLayout.JAVA_BYTE, j * bytes);
                }
                default -> {
                    want = mark(0, 0, posted);
                    got = recv.get(ValueLayout.JAVA_BYTE, 0);
                }
            }
            if (want != got) {
                throw new IllegalStateException(coll + " of " + bytes + " bytes delivered " + got + " from rank " + j
                        + " to rank " + me + ", expected " + want);
            }
        }
    }

    private static byte mark(int from, int to, int stamp) {
        return (byte) (from * 37 + to * 11 + stamp * 3 + 1);
    }

    /** @return the median over iters iterations (after warmup untimed ones) of one post and wait, in µs */
    double pure(int warmup, int iters) {
        for (int i = 0; i < warmup; i++) {
            world.wait(post());
        }
        mp.barrier();
        double[] us = new double[iters];
        for (int i = 0; i < iters; i++) {
            long t0 = System.nanoTime();
            world.wait(post());
            us[i] = (System.nanoTime() - t0) / 1e3;
        }
        verify();
        return Medians.of(us);
    }

    /**
     * @param computeUs the dummy compute per iteration
     * @return the medians of {overall, compute (tests included), test} per iteration, in µs
     */
    double[] overlapped(int warmup, int iters, double computeUs) {
        long slice = Math.max(1, Math.round(computeUs * 1000 / Math.max(1, slices)));
        double[][] us = new double[3][iters];
        mp.barrier();
        for (int i = -warmup; i < iters; i++) {
            long t0 = System.nanoTime();
            CollRequest r = post();
            boolean done = false;
            long computeStart = System.nanoTime();
            long testNanos = 0;
            if (slices == 0) {
                // The CPU idles (as while a GPU kernel runs): nothing of this rank progresses the collective.
                LockSupport.parkNanos(slice);
            }
            for (int s = 0; s < slices; s++) {
                spin(slice);
                if (!done) {
                    long t = System.nanoTime();
                    done = world.test(r);
                    testNanos += System.nanoTime() - t;
                }
            }
            long computeEnd = System.nanoTime();
            if (!done) {
                world.wait(r);
            }
            long t1 = System.nanoTime();
            if (i >= 0) {
                us[0][i] = (t1 - t0) / 1e3;
                us[1][i] = (computeEnd - computeStart) / 1e3;
                us[2][i] = testNanos / 1e3;
            }
        }
        verify();
        // The median, not OSU's mean: on a machine whose CPUs the ranks, their NIC agents and the proxy share, one
        // descheduled iteration can last milliseconds and would dominate a mean.
        return new double[] {Medians.of(us[0]), Medians.of(us[1]), Medians.of(us[2])};
    }

    /** The dummy compute: a busy loop on this thread. */
    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    void close() {
        mp.deregister(sendReg);
        mp.deregister(recvReg);
        mp.free(send);
        mp.free(recv);
    }
}
