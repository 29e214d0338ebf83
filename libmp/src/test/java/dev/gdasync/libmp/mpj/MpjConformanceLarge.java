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
     * Ranks 0 and 1, large messages a receiver holds a while after they matched (on one host the device lets the
     * receive read such a message in place, from the sender's packed copy, until MPJ is done unpacking it):
     * <ul>
     *   <li>rank 0 sends 8 messages with blocking sends, overwriting its array after each, while rank 1's receives,
     *       posted before, are waited for in reverse order: each must hold its own bytes, though the sends completed
     *       and MPJ freed each packed copy long before rank 1 unpacked it;</li>
     *   <li>both ranks, 20 times: a receive posted, a blocking send to the other, then the wait for the receive (the
     *       halo exchange): neither send may wait for the other rank's unpacking, or both would wait forever;</li>
     *   <li>every rank: large broadcasts from each root in turn (MPJ may send one packed buffer to several ranks,
     *       each of which reads it in place).</li>
     * </ul>
     */
    static void rendezvousHeld(int rank, int size) {
        if (rank <= 1) {
            heldPair(rank);
        } else {
            MPI.COMM_WORLD.Barrier();
        }
        for (int root = 0; root < size; root++) {
            for (int k = 0; k < 3; k++) {
                int n = 300_000 + 1000 * k + root;
                byte[] b = rank == root ? pattern(n, 60 + root + k) : new byte[n];
                MPI.COMM_WORLD.Bcast(b, 0, n, MPI.BYTE, root);
                checkExact(b, n, 60 + root + k, "bcast " + k + " from rank " + root);
            }
        }
    }

    private static void heldPair(int rank) {
        int peer = 1 - rank;
        int count = 8;
        AssertionError held = null; // thrown after the halo rounds, so that a failure leaves no rank waiting
        if (rank == 1) {
            byte[][] in = new byte[count][];
            Request[] r = new Request[count];
            for (int k = 0; k < count; k++) {
                in[k] = new byte[200_000 + k];
                r[k] = MPI.COMM_WORLD.Irecv(in[k], 0, in[k].length, MPI.BYTE, peer, 3000 + k);
            }
            MPI.COMM_WORLD.Barrier();
            MPI.COMM_WORLD.Recv(new byte[0], 0, 0, MPI.BYTE, peer, 3100); // every send completed
            for (int k = count - 1; k >= 0; k--) {
                try {
                    Status s = r[k].Wait(); // MPJ's unpacking fails here if the bytes changed under it
                    check(s.Get_count(MPI.BYTE) == in[k].length, "held " + k + ": count " + s.Get_count(MPI.BYTE));
                    checkExact(in[k], in[k].length, 50 + k, "held " + k);
                } catch (AssertionError | RuntimeException e) {
                    held = held != null ? held : new AssertionError("held " + k + ": " + e, e);
                }
            }
        } else {
            MPI.COMM_WORLD.Barrier();
            byte[] out = new byte[200_000 + count];
            for (int k = 0; k < count; k++) {
                System.arraycopy(pattern(200_000 + k, 50 + k), 0, out, 0, 200_000 + k);
                MPI.COMM_WORLD.Send(out, 0, 200_000 + k, MPI.BYTE, peer, 3000 + k);
                java.util.Arrays.fill(out, (byte) 0x5A);
            }
            MPI.COMM_WORLD.Send(new byte[0], 0, 0, MPI.BYTE, peer, 3100);
        }
        for (int round = 0; round < 20; round++) {
            int n = 100_000 + round * 4_000;
            byte[] in = new byte[n];
            Request r = MPI.COMM_WORLD.Irecv(in, 0, n, MPI.BYTE, peer, 3200 + round);
            MPI.COMM_WORLD.Send(pattern(n, rank + round), 0, n, MPI.BYTE, peer, 3200 + round);
            r.Wait();
            checkExact(in, n, peer + round, "halo round " + round);
        }
        if (held != null) {
            throw held;
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
