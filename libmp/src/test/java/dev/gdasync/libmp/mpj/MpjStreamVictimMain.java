package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.stream.HostStream;
import mpi.MPI;
import mpi.Request;

/**
 * The program of {@link MpjOnStreamTest}'s killed-rank case, on 3 ranks: rank 1 sleeps until it is killed, making no
 * MPJ call (so it takes no message out of its slots). Rank 0's stream waits for an {@code Irecv} from rank 1; rank 2
 * sends to rank 1 on a stream until a send stays unrung (the stream waits for a free slot of rank 1 that never comes).
 * Each survivor then prints {@code ready PID}, waits for its stream ({@code synchronize}) and prints
 * {@code FAILED stream NANOS MESSAGE} when the stream fails, then makes one more MPJ call (a send to the other
 * survivor) and prints {@code LATER-FAILED MESSAGE} or {@code LATER-RETURNED}.
 */
public final class MpjStreamVictimMain {
    private MpjStreamVictimMain() {
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank();
        int[] v = new int[1];
        MPI.COMM_WORLD.Allreduce(new int[] {1}, 0, v, 0, 1, MPI.INT, MPI.SUM);
        if (rank == 1) {
            System.out.println("ready " + ProcessHandle.current().pid());
            Thread.sleep(120_000);
            Runtime.getRuntime().halt(3);
        }
        HostStream stream = HostStream.create("victim-" + rank);
        if (rank == 0) {
            Request r = MPI.COMM_WORLD.Irecv(v, 0, 1, MPI.INT, 1, 99);
            MpjOnStream.waitOnStream(r, stream);
        } else {
            boolean stuck = false;
            for (int i = 0; i < 200 && !stuck; i++) {
                Request s = MpjOnStream.isendOnStream(MPI.COMM_WORLD, new int[] {i}, 0, 1, MPI.INT, 1, 5, stream);
                Thread.sleep(100);
                stuck = s.Test() == null; // not rung: the stream waits for a slot of rank 1
            }
            if (!stuck) {
                System.out.println("FAIL: every stream send to rank 1 was rung, though it takes no message");
            }
        }
        System.out.println("ready " + ProcessHandle.current().pid());
        try {
            stream.synchronize();
            System.out.println("RETURNED stream");
        } catch (RuntimeException e) {
            System.out.println("FAILED stream " + System.nanoTime() + " " + MpjVictimMain.describe(e));
        }
        try {
            MPI.COMM_WORLD.Send(new int[] {1}, 0, 1, MPI.INT, 2 - rank, 6);
            System.out.println("LATER-RETURNED");
        } catch (RuntimeException e) {
            System.out.println("LATER-FAILED " + MpjVictimMain.describe(e));
        }
        System.out.flush();
        if (rank == 0) {
            // Rank 0 holds the bootstrap's hub, through which rank 2 hears of rank 1's death: rank 0's own stream may
            // fail first (its queue pair's flush), and it must not leave before the news went out.
            Thread.sleep(3_000);
        }
        Runtime.getRuntime().halt(4);
    }
}
