package dev.gdasync.libmp.mpj;

import mpi.MPI;
import mpi.Request;
import mpi.Status;

import static dev.gdasync.libmp.mpj.MpjConformanceMain.check;

/**
 * Conformance cases of {@link MpjConformanceMain} about large messages (mpiJava 1.2 API only): sizes on both sides of
 * the gdasync device's eager/rendezvous switch (its default, 32 KiB of MPJ's packed buffer), byte-exact, posted before
 * and after the message came, standard and synchronous; many large messages in flight both ways at once; and a large
 * message larger than the receive (truncation; not run on MPJ's multicore device, whose send fails instead).
 */
final class MpjConformanceLarge {
    /** The device's default switch to rendezvous, in packed bytes (MPJ adds a few bytes of section header). */
    private static final int SWITCH = 32 * 1024;

    private MpjConformanceLarge() {
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed * 7 + (i >>> 8));
        }
        return b;
    }

    private static void checkExact(byte[] got, int n, int seed, String what) {
        byte[] want = pattern(n, seed);
        for (int i = 0; i < n; i++) {
            if (got[i] != want[i]) {
                throw new AssertionError(what + ": byte " + i + " of " + n + " is " + got[i] + ", not " + want[i]);
            }
        }
        for (int i = n; i < got.length; i++) {
            check(got[i] == 0, what + ": byte " + i + " past the message's " + n + " was written");
        }
    }

    /**
     * Ranks 0 and 1: every size from 32 bytes below the switch to 32 above (so one of them is exactly at it, whatever
     * MPJ's header adds), then 1 MiB + 3; each received posted first (Irecv before the peer sends), unexpected (after a
     * barrier the sender passed once its Isend was made), and by Ssend; byte-exact, nothing written past the message.
     */
    static void rendezvousSizes(int rank, int size) {
        if (rank > 1) {
            for (int b = 0; b < 3; b++) {
                MPI.COMM_WORLD.Barrier(); // the three of ranks 0 and 1 below
            }
            return;
        }
        int peer = 1 - rank;
        int[] sizes = new int[66];
        for (int k = 0; k < 65; k++) {
            sizes[k] = SWITCH - 32 + k;
        }
        sizes[65] = (1 << 20) + 3;
        for (int n : sizes) {
            int seed = n % 251;
            // Posted before the message comes: rank 0 receives, rank 1 sends; then the other way round.
            for (int sender = 0; sender < 2; sender++) {
                if (rank == sender) {
                    MPI.COMM_WORLD.Recv(new byte[0], 0, 0, MPI.BYTE, peer, 40);
                    MPI.COMM_WORLD.Send(pattern(n, seed), 0, n, MPI.BYTE, peer, 41);
                } else {
                    byte[] in = new byte[n + 16];
                    Request r = MPI.COMM_WORLD.Irecv(in, 0, n + 16, MPI.BYTE, peer, 41);
                    MPI.COMM_WORLD.Send(new byte[0], 0, 0, MPI.BYTE, peer, 40);
                    Status s = r.Wait();
                    check(s.Get_count(MPI.BYTE) == n && s.source == peer && s.tag == 41, "posted " + n + ": count "
                            + s.Get_count(MPI.BYTE));
                    checkExact(in, n, seed, "posted " + n);
                }
            }
        }
        MPI.COMM_WORLD.Barrier();
        // Unexpected: both send first, then receive after a barrier (no rank's send waits for the other's receive).
        Request[] sends = new Request[sizes.length];
        for (int k = 0; k < sizes.length; k++) {
            sends[k] = MPI.COMM_WORLD.Isend(pattern(sizes[k], rank + k), 0, sizes[k], MPI.BYTE, peer, 1000 + k);
        }
        MPI.COMM_WORLD.Barrier();
        for (int k = sizes.length - 1; k >= 0; k--) {
            byte[] in = new byte[sizes[k] + 8];
            Status s = MPI.COMM_WORLD.Recv(in, 0, in.length, MPI.BYTE, peer, 1000 + k);
            check(s.Get_count(MPI.BYTE) == sizes[k], "unexpected " + sizes[k] + ": count " + s.Get_count(MPI.BYTE));
            checkExact(in, sizes[k], peer + k, "unexpected " + sizes[k]);
        }
        Request.Waitall(sends);
        // Synchronous, both directions at once through Issend.
        for (int n : new int[] {SWITCH - 16, SWITCH, SWITCH + 16, 300_000}) {
            byte[] in = new byte[n];
            Request r = MPI.COMM_WORLD.Irecv(in, 0, n, MPI.BYTE, peer, 42);
            Request s = MPI.COMM_WORLD.Issend(pattern(n, rank), 0, n, MPI.BYTE, peer, 42);
            r.Wait();
            s.Wait();
            checkExact(in, n, peer, "ssend " + n);
        }
        MPI.COMM_WORLD.Barrier();
    }

    /**
     * Ranks 0 and 1 send each other 48 messages of 200 KB to 800 KB at once (more than the device's rendezvous area
     * holds: some go through its slots), received in the reverse order of their tags, byte-exact.
     */
    static void rendezvousMany(int rank, int size) {
        if (rank > 1) {
            return;
        }
        int peer = 1 - rank;
        int count = 48;
        Request[] all = new Request[2 * count];
        byte[][] in = new byte[count][];
        for (int k = 0; k < count; k++) {
            int n = 200_000 + k * 12_500 + rank;
            all[k] = MPI.COMM_WORLD.Isend(pattern(n, k + rank), 0, n, MPI.BYTE, peer, 2000 + k);
        }
        for (int k = count - 1; k >= 0; k--) {
            int n = 200_000 + k * 12_500 + peer;
            in[k] = new byte[n];
            all[count + k] = MPI.COMM_WORLD.Irecv(in[k], 0, n, MPI.BYTE, peer, 2000 + k);
        }
        Request.Waitall(all);
        for (int k = 0; k < count; k++) {
            checkExact(in[k], in[k].length, k + peer, "message " + k);
        }
    }

    /**
     * Ranks 0 and 1: a message of 100 000 bytes (rendezvous-sized) into a receive of 50 000 fails the receive
     * (truncation, printed), the sender's request completes, and the ranks still talk afterwards.
     */
    static void largeTruncation(int rank, int size) {
        if (rank > 1) {
            return;
        }
        int peer = 1 - rank;
        int n = 100_000;
        Request s = MPI.COMM_WORLD.Isend(pattern(n, 5), 0, n, MPI.BYTE, peer, 2100);
        String error = null;
        try {
            MPI.COMM_WORLD.Recv(new byte[n / 2], 0, n / 2, MPI.BYTE, peer, 2100);
        } catch (RuntimeException e) {
            error = String.valueOf(e.getMessage());
        }
        check(error != null, "a message of " + n + " bytes into a receive of " + n / 2 + " must fail");
        System.out.println("large truncation: " + error);
        s.Wait();
        byte[] b = new byte[4];
        MPI.COMM_WORLD.Sendrecv(pattern(4, rank), 0, 4, MPI.BYTE, peer, 2101, b, 0, 4, MPI.BYTE, peer, 2101);
        checkExact(b, 4, peer, "after the truncation");
    }
}
