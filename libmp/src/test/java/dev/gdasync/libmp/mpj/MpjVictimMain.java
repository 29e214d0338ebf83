package dev.gdasync.libmp.mpj;

import mpi.MPI;

/**
 * An MPJ Express program (mpiJava 1.2 API only, but for the abort) for {@link MpjOverGdasyncTest}'s killed-rank case, on 3
 * ranks: after a first exchange every rank prints {@code ready PID}; rank 1 then sleeps until it is killed (with the
 * argument {@code abort}: aborts the job through {@code MpjGdasync.abort} first), rank 0 blocks in a
 * receive from rank 1 and rank 2 in a barrier. Each survivor prints {@code FAILED CALL NANOS MESSAGE} when its call
 * throws ({@code System.nanoTime()}, the same clock in every process of the machine), then makes one more call (a send
 * to the other survivor) and prints {@code LATER-FAILED MESSAGE} or {@code LATER-RETURNED}.
 */
public final class MpjVictimMain {
    private MpjVictimMain() {
    }

    public static void main(String[] args) throws Exception {
        String[] mine = MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank();
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

    private static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null && sb.length() < 2000; t = t.getCause() == t ? null : t.getCause()) {
            sb.append(sb.isEmpty() ? "" : " / caused by ").append(t.getClass().getName()).append(": ").append(t.getMessage());
        }
        return sb.toString().replace('\n', ' ');
    }
}
