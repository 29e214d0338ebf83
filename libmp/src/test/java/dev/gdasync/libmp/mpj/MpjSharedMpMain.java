package dev.gdasync.libmp.mpj;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.ga.Distribution;
import dev.gdasync.libmp.ga.GaType;
import dev.gdasync.libmp.ga.GlobalArray;
import dev.gdasync.libmp.ga.GlobalArrays;
import mpi.MPI;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The program of {@code MpjOverGdasyncTest#libmpLayersThatNeedTwoSidedCallsRefuseMpjsMpAtOnce}, on 2 or more ranks:
 * on the Mp that carries MPJ's messages, {@code Collectives.open} and a global array's {@code sendMsg} and
 * {@code recvMsg} are refused at once with a message naming MPJ's device, and the program goes on; a global array's
 * one-sided put, get and sync do work there, beside MPJ's collectives. Prints {@code REFUSED-COLL ms=T: MESSAGE},
 * {@code REFUSED-GA-SEND ...}, {@code REFUSED-GA-RECV ...}, {@code GA OK}, {@code MPJ OK}, or {@code FAIL WHAT: WHY}.
 */
public final class MpjSharedMpMain {
    private MpjSharedMpMain() {
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank();
        int size = MPI.COMM_WORLD.Size();
        Mp mp = MpjGdasync.mp();
        long start = System.nanoTime();
        try (Collectives c = Collectives.open(mp)) {
            System.out.println("FAIL coll: Collectives.open accepted MPJ's Mp");
        } catch (IllegalStateException e) {
            System.out.println("REFUSED-COLL ms=" + (System.nanoTime() - start) / 1_000_000 + ": " + e.getMessage());
        }
        try (GlobalArrays ga = new GlobalArrays(mp)) {
            int peer = (rank + 1) % size;
            try {
                ga.sendMsg(peer, MemorySegment.ofArray(new byte[8]));
                System.out.println("FAIL ga-send: sendMsg accepted MPJ's Mp");
            } catch (IllegalStateException e) {
                System.out.println("REFUSED-GA-SEND: " + e.getMessage());
            }
            try {
                ga.recvMsg(peer);
                System.out.println("FAIL ga-recv: recvMsg accepted MPJ's Mp");
            } catch (IllegalStateException e) {
                System.out.println("REFUSED-GA-RECV: " + e.getMessage());
            }
            GlobalArray a = ga.create("beside-mpj", GaType.INT, Distribution.even(size, 4 * size));
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment buf = arena.allocate(4L * 4 * size);
                // Each rank writes its four elements into the next rank's block, then reads the whole array.
                int next = (rank + 1) % size;
                for (int k = 0; k < 4; k++) {
                    buf.setAtIndex(ValueLayout.JAVA_INT, k, 100 * rank + k);
                }
                a.put(new int[] {4 * next}, new int[] {4 * next + 3}, buf, new int[0]);
                ga.sync();
                int[] ints = {0};
                MPI.COMM_WORLD.Allreduce(new int[] {1}, 0, ints, 0, 1, MPI.INT, MPI.SUM);
                a.get(new int[] {0}, new int[] {4 * size - 1}, buf, new int[0]);
                boolean right = ints[0] == size;
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
        int[] token = {rank};
        int[] sum = {0};
        MPI.COMM_WORLD.Allreduce(token, 0, sum, 0, 1, MPI.INT, MPI.SUM);
        System.out.println(sum[0] == size * (size - 1) / 2 ? "MPJ OK" : "FAIL mpj: Allreduce gave " + sum[0]);
        MPI.Finalize();
    }
}
