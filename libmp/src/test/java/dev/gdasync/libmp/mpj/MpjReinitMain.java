package dev.gdasync.libmp.mpj;

import mpi.MPI;

import java.util.Arrays;

/**
 * An MPJ Express program (mpiJava 1.2 API only) that calls {@code MPI.Init} again after {@code MPI.Finalize}, as MPJ
 * allows and MPJ's own test suite does (ten rounds, then once per case): each round exchanges a message around the
 * ring, checked, and a collective. Right after its {@code MPI.Init} each rank sends the next rank a message, which
 * may arrive while that rank is still between rounds; the next rank receives it at the end of the round. A 64 KiB
 * message (a rendezvous over gdasync) goes around too. Prints {@code OK round R} per round and
 * {@code DONE rank R of N} after the last {@code MPI.Finalize}. Argument (after MPJ's): the rounds (default 10).
 */
public final class MpjReinitMain {
    private MpjReinitMain() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = 10;
        int rank = -1;
        int size = -1;
        for (int round = 0; round < rounds; round++) {
            String[] mine = MPI.Init(args);
            if (mine.length > 0) {
                rounds = Integer.parseInt(mine[0]);
            }
            rank = MPI.COMM_WORLD.Rank();
            size = MPI.COMM_WORLD.Size();
            int next = (rank + 1) % size;
            int prev = (rank + size - 1) % size;
            int[] early = {round * 1000 + rank};
            mpi.Request sent = MPI.COMM_WORLD.Isend(early, 0, 1, MPI.INT, next, 7);
            int[] token = {round * 100 + rank};
            int[] got = new int[1];
            MPI.COMM_WORLD.Sendrecv(token, 0, 1, MPI.INT, next, 3, got, 0, 1, MPI.INT, prev, 3);
            check(got[0] == round * 100 + prev, "round " + round + ": ring token " + got[0]);
            byte[] large = new byte[64 * 1024];
            Arrays.fill(large, (byte) (round + rank));
            byte[] largeIn = new byte[large.length];
            MPI.COMM_WORLD.Sendrecv(large, 0, large.length, MPI.BYTE, next, 4, largeIn, 0, largeIn.length, MPI.BYTE,
                    prev, 4);
            for (byte b : largeIn) {
                check(b == (byte) (round + prev), "round " + round + ": large message byte " + b);
            }
            int[] sum = new int[1];
            MPI.COMM_WORLD.Allreduce(new int[] {round}, 0, sum, 0, 1, MPI.INT, MPI.SUM);
            check(sum[0] == round * size, "round " + round + ": allreduce " + sum[0]);
            int[] earlyIn = new int[1];
            MPI.COMM_WORLD.Recv(earlyIn, 0, 1, MPI.INT, prev, 7);
            check(earlyIn[0] == round * 1000 + prev, "round " + round + ": early message " + earlyIn[0]);
            sent.Wait();
            MPI.COMM_WORLD.Barrier();
            System.out.println("OK round " + round);
            MPI.Finalize();
        }
        System.out.println("DONE rank " + rank + " of " + size);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
