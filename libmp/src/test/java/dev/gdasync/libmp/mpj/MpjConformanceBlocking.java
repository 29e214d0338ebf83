package dev.gdasync.libmp.mpj;

import mpi.MPI;
import mpi.Request;
import mpi.Status;

import java.util.Arrays;

import static dev.gdasync.libmp.mpj.MpjConformanceMain.check;

/**
 * The conformance case of blocking {@code Send}/{@code Recv} between two ranks, which the device serves by its lean
 * path when nothing else is under way (a small message straight into the peer's slot; a blocking receive that watches
 * its peer's ring itself), and by the usual way otherwise: a receive posted before it takes the first message; a
 * message of another tag first, an object message, a larger message, a synchronous send, senders held back by
 * credits; the status of a wildcard receive. Ranks 0 and 1 take part; a third rank, when there is one, sends to rank 1
 * while it waits for rank 0.
 */
final class MpjConformanceBlocking {
    private MpjConformanceBlocking() {
    }

    static void blocking(int rank, int size) throws Exception {
        if (rank == 0) {
            sender(size);
        } else if (rank == 1) {
            receiver(size);
        } else if (rank == 2) {
            // While rank 1 waits for rank 0, a message of this rank's is on its way (in rank 1's ring, over gdasync):
            // rank 0 sends once this rank's send started. (A non-blocking send: a blocking one may wait for rank 1.)
            Request r = MPI.COMM_WORLD.Isend(new int[] {99}, 0, 1, MPI.INT, 1, 9);
            MPI.COMM_WORLD.Send(new int[0], 0, 0, MPI.INT, 0, 11);
            r.Wait();
        }
    }

    private static void sender(int size) throws Exception {
        // A receive posted before the blocking one takes the first message: sent once rank 1 says both are on the way.
        MPI.COMM_WORLD.Recv(new int[0], 0, 0, MPI.INT, 1, 8);
        MPI.COMM_WORLD.Send(new int[] {1}, 0, 1, MPI.INT, 1, 7);
        MPI.COMM_WORLD.Send(new int[] {2}, 0, 1, MPI.INT, 1, 7);
        // Another tag first: the blocking receive of tag 2 skips it, the next receive takes it. (Its send is
        // non-blocking: a blocking one may wait for its receive, which comes after the other's.)
        Request other = MPI.COMM_WORLD.Isend(new int[] {11}, 0, 1, MPI.INT, 1, 1);
        MPI.COMM_WORLD.Send(new int[] {22}, 0, 1, MPI.INT, 1, 2);
        other.Wait();
        // A wildcard tag: the status says which.
        MPI.COMM_WORLD.Send(new int[] {55, 56, 57}, 0, 3, MPI.INT, 1, 5);
        // An object message, then a small one behind it.
        MPI.COMM_WORLD.Send(new Object[] {"object"}, 0, 1, MPI.OBJECT, 1, 3);
        MPI.COMM_WORLD.Send(new int[] {33}, 0, 1, MPI.INT, 1, 3);
        // A synchronous send, then a small one.
        MPI.COMM_WORLD.Ssend(new int[] {44}, 0, 1, MPI.INT, 1, 4);
        MPI.COMM_WORLD.Send(new int[] {45}, 0, 1, MPI.INT, 1, 4);
        if (size > 2) {
            MPI.COMM_WORLD.Recv(new int[0], 0, 0, MPI.INT, 2, 11);
        }
        MPI.COMM_WORLD.Send(new int[] {10}, 0, 1, MPI.INT, 1, 10);
        // Many more blocking sends than the peer's slots while it sleeps: the sends wait for its credits.
        for (int i = 0; i < 300; i++) {
            MPI.COMM_WORLD.Send(new int[] {i}, 0, 1, MPI.INT, 1, 12);
        }
        // A ping-pong of sizes that fit one fragment, several, or go by rendezvous.
        for (int round = 0; round < 120; round++) {
            byte[] out = bytes(round, length(round));
            MPI.COMM_WORLD.Send(out, 0, out.length, MPI.BYTE, 1, 13);
            byte[] in = new byte[out.length];
            Status s = MPI.COMM_WORLD.Recv(in, 0, in.length, MPI.BYTE, 1, 13);
            check(s.source == 1 && s.Get_count(MPI.BYTE) == out.length, "round " + round + " status " + s.source
                    + "/" + s.Get_count(MPI.BYTE));
            check(Arrays.equals(in, bytes(round + 1000, out.length)), "round " + round + " reply's bytes");
        }
    }

    private static void receiver(int size) throws Exception {
        int[] a = new int[1];
        int[] b = new int[1];
        Request first = MPI.COMM_WORLD.Irecv(a, 0, 1, MPI.INT, 0, 7);
        MPI.COMM_WORLD.Send(new int[0], 0, 0, MPI.INT, 0, 8);
        MPI.COMM_WORLD.Recv(b, 0, 1, MPI.INT, 0, 7);
        first.Wait();
        check(a[0] == 1 && b[0] == 2, "the receive posted first took " + a[0] + ", the blocking one " + b[0]);

        int[] v = new int[1];
        Status s = MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 2);
        check(v[0] == 22 && s.tag == 2, "the receive of tag 2 took " + v[0] + " tag " + s.tag);
        s = MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 1);
        check(v[0] == 11 && s.tag == 1, "the receive of tag 1 took " + v[0] + " tag " + s.tag);

        int[] three = new int[4];
        s = MPI.COMM_WORLD.Recv(three, 0, 4, MPI.INT, 0, MPI.ANY_TAG);
        check(s.tag == 5 && s.source == 0 && s.Get_count(MPI.INT) == 3 && three[0] == 55 && three[2] == 57,
                "a wildcard receive: tag " + s.tag + " source " + s.source + " count " + s.Get_count(MPI.INT)
                        + " first " + three[0]);

        Object[] o = new Object[1];
        MPI.COMM_WORLD.Recv(o, 0, 1, MPI.OBJECT, 0, 3);
        MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 3);
        check("object".equals(o[0]) && v[0] == 33, "the object " + o[0] + ", then " + v[0]);

        MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 4);
        check(v[0] == 44, "the synchronous send's " + v[0]);
        MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 4);
        check(v[0] == 45, "after the synchronous send " + v[0]);

        MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 10);
        check(v[0] == 10, "from rank 0 while rank 2's message waits: " + v[0]);
        if (size > 2) {
            s = MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 2, 9);
            check(v[0] == 99 && s.source == 2, "rank 2's message: " + v[0] + " from " + s.source);
        }

        Thread.sleep(200);
        for (int i = 0; i < 300; i++) {
            MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 12);
            check(v[0] == i, "blocking send " + i + " arrived as " + v[0]);
        }

        for (int round = 0; round < 120; round++) {
            int n = length(round);
            byte[] in = new byte[n];
            Status r = MPI.COMM_WORLD.Recv(in, 0, n, MPI.BYTE, 0, 13);
            check(r.source == 0 && r.tag == 13 && r.Get_count(MPI.BYTE) == n, "round " + round + " status");
            check(Arrays.equals(in, bytes(round, n)), "round " + round + " bytes");
            byte[] out = bytes(round + 1000, n);
            MPI.COMM_WORLD.Send(out, 0, n, MPI.BYTE, 0, 13);
        }
    }

    /** @return a round's message length: empty, a few bytes, several fragments, rendezvous-sized */
    private static int length(int round) {
        return switch (round % 6) {
            case 0 -> 0;
            case 1 -> 8;
            case 2 -> 1 + round * 7;
            case 3 -> 5000 + round;
            case 4 -> 70_000 + round;
            default -> 300_000 + round;
        };
    }

    private static byte[] bytes(int seed, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i * 7);
        }
        return b;
    }
}
