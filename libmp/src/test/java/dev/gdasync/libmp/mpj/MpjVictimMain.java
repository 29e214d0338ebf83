package dev.gdasync.libmp.mpj;

import mpi.MPI;

/**
 * An MPJ Express program (mpiJava 1.2 API only, but for the abort) for {@link MpjOverGdasyncTest}'s killed-rank case, on 3
 * ranks: after a first exchange every rank prints {@code ready PID}; rank 1 then sleeps until it is killed (with the
 * argument {@code abort}: aborts the job through {@code MpjGdasync.abort} first), rank 0 blocks in a
 * receive from rank 1 and rank 2 in a barrier. Each survivor prints {@code FAILED CALL NANOS MESSAGE} when its call
 * throws ({@code System.nanoTime()}, the same clock in every process of the machine), then makes one more call (a send
 * to the other survivor) and prints {@code LATER-FAILED MESSAGE} or {@code LATER-RETURNED}.
 *
 * <p>With the argument {@code rendezvous}, the calls are large messages caught mid-rendezvous: before its
 * {@code ready} line rank 1 sends rank 2 a message of 1 MiB that rank 2 has not received yet (its bytes wait in
 * rank 1's memory); rank 0 then blocks in a synchronous send of 1 MiB to rank 1, which rank 1 never receives (rank 0
 * waits for the reader's word), and rank 2 in a receive from rank 1; rank 2's later call receives the 1 MiB message
 * that rank 1 announced before it was killed.
 */
public final class MpjVictimMain {
    private MpjVictimMain() {
    }

    public static void main(String[] args) throws Exception {
        String[] mine = MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank();
        boolean rendezvous = mine.length > 0 && mine[0].equals("rendezvous");
        byte[] large = new byte[1 << 20];
        if (rendezvous && rank == 1) {
            MPI.COMM_WORLD.Isend(large, 0, large.length, MPI.BYTE, 2, 77);
        }
        int[] v = new int[1];
        MPI.COMM_WORLD.Allreduce(new int[] {1}, 0, v, 0, 1, MPI.INT, MPI.SUM);
        System.out.println("ready " + ProcessHandle.current().pid());
        if (rank == 1) {
            if (mine.length > 0 && mine[0].equals("abort")) {
                Thread.sleep(300);
                dev.gdasync.libmp.mpj.MpjGdasync.abort("the victim gives up");
            }
            Thread.sleep(120_000);
            Runtime.getRuntime().halt(3);
        }
        if (rendezvous) {
            rendezvousCalls(rank, large);
            return;
        }
        String call = rank == 0 ? "recv" : "barrier";
        try {
            if (rank == 0) {
                MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 1, 99);
            } else {
                MPI.COMM_WORLD.Barrier();
            }
            System.out.println("RETURNED " + call);
        } catch (RuntimeException e) {
            System.out.println("FAILED " + call + " " + System.nanoTime() + " " + describe(e));
        }
        try {
            MPI.COMM_WORLD.Send(new int[] {1}, 0, 1, MPI.INT, 2 - rank, 5);
            System.out.println("LATER-RETURNED");
        } catch (RuntimeException e) {
            System.out.println("LATER-FAILED " + describe(e));
        }
        System.out.flush();
        Runtime.getRuntime().halt(4);
    }

    private static void rendezvousCalls(int rank, byte[] large) {
        String call = rank == 0 ? "ssend" : "recv";
        try {
            if (rank == 0) {
                MPI.COMM_WORLD.Ssend(large, 0, large.length, MPI.BYTE, 1, 99);
            } else {
                MPI.COMM_WORLD.Recv(new int[1], 0, 1, MPI.INT, 1, 99);
            }
            System.out.println("RETURNED " + call);
        } catch (RuntimeException e) {
            System.out.println("FAILED " + call + " " + System.nanoTime() + " " + describe(e));
        }
        try {
            if (rank == 0) {
                MPI.COMM_WORLD.Send(new int[] {1}, 0, 1, MPI.INT, 2, 5);
            } else {
                MPI.COMM_WORLD.Recv(large, 0, large.length, MPI.BYTE, 1, 77);
            }
            System.out.println("LATER-RETURNED");
        } catch (RuntimeException e) {
            System.out.println("LATER-FAILED " + describe(e));
        }
        System.out.flush();
        Runtime.getRuntime().halt(4);
    }

    /** @return an exception and its causes on one line, as the killed-rank tests read them */
    static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null && sb.length() < 2000; t = t.getCause() == t ? null : t.getCause()) {
            sb.append(sb.isEmpty() ? "" : " / caused by ").append(t.getClass().getName()).append(": ").append(t.getMessage());
        }
        return sb.toString().replace('\n', ' ');
    }
}
