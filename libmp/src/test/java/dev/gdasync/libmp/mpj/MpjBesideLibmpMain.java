package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.ga.Distribution;
import dev.gdasync.libmp.ga.GaType;
import dev.gdasync.libmp.ga.GlobalArray;
import dev.gdasync.libmp.ga.GlobalArrays;
import mpi.MPI;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The program of {@code MpjOverGdasyncTest#libmpLayersRunOnMpjsMpBesideMpjsMessages}, on 2 or more ranks: on the Mp
 * that carries MPJ's messages, between and around MPJ's own calls, run
 * <ul>
 *   <li>libmp's two-sided calls: an {@code irecv} and an {@code isend} in a ring with MPJ's {@code Sendrecv} going
 *       while they are in flight, then {@code isendOnStream}/{@code waitOnStream} on host streams, and a stream send
 *       held unrung by a gate while MPJ sends to the same rank (between hosts the device holds its message back until
 *       the stream rang), and while a large MPJ message from that rank arrives (between hosts its read waits);</li>
 *   <li>the collectives of {@code coll} ({@code Collectives.open}, allreduce) alternating with MPJ's
 *       {@code Allreduce};</li>
 *   <li>a global array's messages ({@code sendMsg}/{@code recvMsg}, a token around the ring) and its one-sided put,
 *       get and sync.</li>
 * </ul>
 * Prints {@code LIBMP OK}, {@code STREAM OK}, {@code GATED OK}, {@code GATED-READ OK}, {@code COLL OK}, {@code GA-MSG OK}, {@code GA OK}, {@code MPJ OK}, or
 * {@code FAIL WHAT: WHY}.
 */
public final class MpjBesideLibmpMain {
    private static final int ROUNDS = 20;

    private MpjBesideLibmpMain() {
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank();
        int size = MPI.COMM_WORLD.Size();
        int next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        Mp mp = MpjGdasync.mp();
        MemorySegment in = mp.allocate(64);
        MemorySegment out = mp.allocate(64);
        MpRegistration inReg = mp.register(in);
        MpRegistration outReg = mp.register(out);
        try {
            boolean right = true;
            for (int round = 0; round < ROUNDS; round++) {
                MpRequest recv = mp.irecv(in.asSlice(0, 8), prev, inReg);
                MPI.COMM_WORLD.Barrier(); // every receive is posted before its send (libmp's rule, as LibMP's)
                out.set(ValueLayout.JAVA_LONG, 0, 1000L * rank + round);
                MpRequest send = mp.isend(out.asSlice(0, 8), next, outReg);
                int[] got = {-1};
                MPI.COMM_WORLD.Sendrecv(new int[] {round + rank}, 0, 1, MPI.INT, next, 7, got, 0, 1, MPI.INT, prev, 7);
                mp.wait(recv);
                mp.wait(send);
                right &= got[0] == round + prev && in.get(ValueLayout.JAVA_LONG, 0) == 1000L * prev + round;
            }
            System.out.println(right ? "LIBMP OK" : "FAIL libmp: a message of isend/irecv or Sendrecv is wrong");
            try (HostStream stream = HostStream.create("beside-mpj-" + rank)) {
                right = true;
                for (int round = 0; round < ROUNDS; round++) {
                    MpRequest recv = mp.irecv(in.asSlice(8, 8), prev, inReg);
                    MPI.COMM_WORLD.Barrier();
                    long value = 7000L * rank + round;
                    stream.launch(() -> out.set(ValueLayout.JAVA_LONG, 8, value)); // a "kernel" fills the message
                    MpRequest send = mp.isendOnStream(out.asSlice(8, 8), next, outReg, stream);
                    mp.waitOnStream(recv, stream);
                    mp.waitOnStream(send, stream);
                    int[] sum = {0};
                    MPI.COMM_WORLD.Allreduce(new int[] {round}, 0, sum, 0, 1, MPI.INT, MPI.SUM);
                    stream.synchronize();
                    mp.waitAll(recv, send); // the CPU reaps what the stream waited for
                    right &= sum[0] == round * size && in.get(ValueLayout.JAVA_LONG, 8) == 7000L * prev + round;
                }
                System.out.println(right ? "STREAM OK" : "FAIL stream: a stream's message or MPJ's Allreduce is wrong");
                // A stream send held back by a gate: the queue pair to `next` holds it unrung while MPJ sends to
                // `next` from the CPU. Between hosts the device's puts wait for the stream to ring it (they must not
                // fail); on one host its stores need no queue pair and go at once.
                MpRequest recv = mp.irecv(in.asSlice(24, 8), prev, inReg);
                MPI.COMM_WORLD.Barrier();
                MemoryWord gate = MemoryWord.word32(out, 32, "gate");
                out.set(ValueLayout.JAVA_LONG, 24, 9000L + rank);
                mp.wait32OnStream(gate, 1, WaitCondition.EQ, stream);
                MpRequest send = mp.isendOnStream(out.asSlice(24, 8), next, outReg, stream);
                mpi.Request mpjSend = MPI.COMM_WORLD.Isend(new int[] {rank}, 0, 1, MPI.INT, next, 8);
                boolean heldBack = mp.sendsAwaitStream(next);
                gate.set32(1, true);
                int[] got = {-1};
                MPI.COMM_WORLD.Recv(got, 0, 1, MPI.INT, prev, 8);
                mpjSend.Wait();
                stream.synchronize();
                mp.waitAll(recv, send);
                System.out.println(heldBack && got[0] == prev && in.get(ValueLayout.JAVA_LONG, 24) == 9000L + prev
                        ? "GATED OK" : "FAIL gated: held back " + heldBack + ", MPJ got " + got[0] + ", libmp got "
                        + in.get(ValueLayout.JAVA_LONG, 24));
                // A large MPJ message from `prev` arrives while a stream send to `prev` is held by a gate: between
                // hosts its read (a get on that queue pair) must wait for the stream, without holding up the CPU's
                // MPJ calls meanwhile (the tests below), and complete once the gate opened.
                MpRequest back = mp.irecv(in.asSlice(40, 8), next, inReg);
                MPI.COMM_WORLD.Barrier();
                MemoryWord gate2 = MemoryWord.word32(out, 48, "gate2");
                out.set(ValueLayout.JAVA_LONG, 40, 11000L + rank);
                mp.wait32OnStream(gate2, 1, WaitCondition.EQ, stream);
                MpRequest toPrev = mp.isendOnStream(out.asSlice(40, 8), prev, outReg, stream);
                byte[] large = new byte[100_000];
                java.util.Arrays.fill(large, (byte) rank);
                byte[] fromPrev = new byte[large.length];
                mpi.Request bigRecv = MPI.COMM_WORLD.Irecv(fromPrev, 0, fromPrev.length, MPI.BYTE, prev, 9);
                mpi.Request bigSend = MPI.COMM_WORLD.Isend(large, 0, large.length, MPI.BYTE, next, 9);
                for (int look = 0; look < 200; look++) {
                    bigRecv.Test(); // moves the device on: takes the announcement, holds its read back between hosts
                    Thread.sleep(1);
                }
                gate2.set32(1, true);
                bigRecv.Wait();
                bigSend.Wait();
                stream.synchronize();
                mp.waitAll(back, toPrev);
                boolean bytesRight = true;
                for (byte b : fromPrev) {
                    bytesRight &= b == (byte) prev;
                }
                System.out.println(bytesRight && in.get(ValueLayout.JAVA_LONG, 40) == 11000L + next ? "GATED-READ OK"
                        : "FAIL gated read: MPJ's bytes right " + bytesRight + ", libmp got "
                        + in.get(ValueLayout.JAVA_LONG, 40));
            }
        } catch (RuntimeException | InterruptedException e) {
            System.out.println("FAIL libmp: " + e);
            e.printStackTrace(System.out);
        }
        try (Collectives coll = Collectives.open(mp)) {
            Communicator world = coll.world();
            boolean right = true;
            for (int round = 0; round < ROUNDS; round++) {
                out.set(ValueLayout.JAVA_LONG, 16, rank + round);
                world.allreduce(out.asSlice(16, 8), outReg, in.asSlice(16, 8), inReg, 1, DataType.INT64, ReduceOp.SUM);
                int[] max = {-1};
                MPI.COMM_WORLD.Allreduce(new int[] {rank + round}, 0, max, 0, 1, MPI.INT, MPI.MAX);
                right &= in.get(ValueLayout.JAVA_LONG, 16) == (long) size * (size - 1) / 2 + (long) size * round
                        && max[0] == size - 1 + round;
            }
            System.out.println(right ? "COLL OK" : "FAIL coll: an allreduce of coll or of MPJ is wrong");
        } catch (RuntimeException e) {
            System.out.println("FAIL coll: " + e);
            e.printStackTrace(System.out);
        }
        try (GlobalArrays ga = new GlobalArrays(mp)) {
            // A token around the ring: rank 0 sends first, every other rank receives, then passes it on.
            byte[] token = new byte[100];
            if (rank == 0) {
                ga.sendMsg(next, MemorySegment.ofArray(token));
                token = ga.recvMsg(prev).toArray(ValueLayout.JAVA_BYTE);
            } else {
                token = ga.recvMsg(prev).toArray(ValueLayout.JAVA_BYTE);
                token[rank] = (byte) rank;
                ga.sendMsg(next, MemorySegment.ofArray(token));
            }
            int[] ints = {0};
            MPI.COMM_WORLD.Allreduce(new int[] {1}, 0, ints, 0, 1, MPI.INT, MPI.SUM);
            boolean right = ints[0] == size;
            if (rank == 0) {
                for (int r = 1; r < size; r++) {
                    right &= token[r] == r;
                }
            }
            System.out.println(right ? "GA-MSG OK" : "FAIL ga-msg: the token or MPJ's Allreduce is wrong");
            GlobalArray a = ga.create("beside-mpj", GaType.INT, Distribution.even(size, 4 * size));
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment buf = arena.allocate(4L * 4 * size);
                // Each rank writes its four elements into the next rank's block, then reads the whole array.
                for (int k = 0; k < 4; k++) {
                    buf.setAtIndex(ValueLayout.JAVA_INT, k, 100 * rank + k);
                }
                a.put(new int[] {4 * next}, new int[] {4 * next + 3}, buf, new int[0]);
                ga.sync();
                MPI.COMM_WORLD.Allreduce(new int[] {1}, 0, ints, 0, 1, MPI.INT, MPI.SUM);
                a.get(new int[] {0}, new int[] {4 * size - 1}, buf, new int[0]);
                right = ints[0] == size;
                for (int r = 0; r < size; r++) {
                    int writer = (r + size - 1) % size;
                    for (int k = 0; k < 4; k++) {
                        right &= buf.getAtIndex(ValueLayout.JAVA_INT, 4L * r + k) == 100 * writer + k;
                    }
                }
                ga.sync();
                System.out.println(right ? "GA OK" : "FAIL ga: the array or MPJ's Allreduce holds wrong values");
            }
            a.destroy();
        } catch (RuntimeException e) {
            System.out.println("FAIL ga: " + e);
            e.printStackTrace(System.out);
        }
        int[] sum = {0};
        MPI.COMM_WORLD.Allreduce(new int[] {rank}, 0, sum, 0, 1, MPI.INT, MPI.SUM);
        System.out.println(sum[0] == size * (size - 1) / 2 ? "MPJ OK" : "FAIL mpj: Allreduce gave " + sum[0]);
        MPI.Finalize();
    }
}
