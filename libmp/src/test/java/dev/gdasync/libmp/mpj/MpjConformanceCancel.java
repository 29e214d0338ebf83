package dev.gdasync.libmp.mpj;

import mpi.Intracomm;
import mpi.MPI;
import mpi.Request;
import mpi.Status;

import java.util.Arrays;

import static dev.gdasync.libmp.mpj.MpjConformanceMain.check;

/**
 * The {@code cancel} case of {@link MpjConformanceMain} (mpiJava 1.2 API only), between ranks 0 (receives) and 1
 * (sends, each time rank 0 says go on tag 69):
 * <ol>
 *   <li>an {@code Irecv} cancelled before any message: MPJ marks it null, its {@code Wait} returns at once, and the
 *   two messages sent on its tag afterwards wait unexpected (a {@code Probe} finds the first) and go to the next
 *   receives, its array untouched;</li>
 *   <li>cancelled wildcard receives ({@code ANY_SOURCE} and {@code ANY_TAG}, each, and both): none takes the message
 *   that comes next, a plain receive does;</li>
 *   <li>a receive that matched its message when it was posted (a {@code Probe} saw it first): its cancel does nothing
 *   and its {@code Wait} has the data;</li>
 *   <li>a cancel racing a 1 MiB message (rank 0 moves the device on for 5 ms after the small message rank 1 sends
 *   just before it): either it is cancelled and the next receive gets the message, or it matched (and may still be
 *   arriving) and its {@code Wait} has it; nothing lost either way.</li>
 * </ol>
 * Not run on MPJ's multicore device, whose cancel never cancels (it answers false).
 */
final class MpjConformanceCancel {
    private static final int GO = 69;
    private static final int BIG = 1 << 17; // doubles: 1 MiB

    private MpjConformanceCancel() {
    }

    static void cancel(int rank, int size) {
        if (rank == 0) {
            receiver(MPI.COMM_WORLD);
        } else if (rank == 1) {
            sender(MPI.COMM_WORLD);
        }
    }

    private static void sender(Intracomm w) {
        int[] go = new int[1];
        w.Recv(go, 0, 1, MPI.INT, 0, GO);
        w.Send(new int[] {1, 2, 3, 4}, 0, 4, MPI.INT, 0, 60);
        w.Send(new int[] {5, 6, 7, 8}, 0, 4, MPI.INT, 0, 60);
        w.Recv(go, 0, 1, MPI.INT, 0, GO);
        w.Send(new int[] {9, 10, 11, 12}, 0, 4, MPI.INT, 0, 61);
        w.Send(new int[] {13, 14, 15, 16}, 0, 4, MPI.INT, 0, 62);
        w.Recv(go, 0, 1, MPI.INT, 0, GO);
        double[] big = new double[BIG];
        for (int i = 0; i < BIG; i++) {
            big[i] = i;
        }
        w.Send(new int[1], 0, 1, MPI.INT, 0, 64); // the large message comes next
        w.Send(big, 0, BIG, MPI.DOUBLE, 0, 63);
    }

    private static void receiver(Intracomm w) {
        int[] go = {1};
        // 1. Cancelled before any message came.
        int[] gone = {-1, -1, -1, -1};
        Request a = w.Irecv(gone, 0, 4, MPI.INT, 1, 60);
        a.Cancel();
        check(a.Is_null(), "an Irecv that no message matched yet was not cancelled");
        Status sa = a.Wait();
        // MPJ 0.44's Test_cancelled answers false for every status (a constant): Is_null above is what says cancelled.
        check(!sa.Test_cancelled(), "Test_cancelled: MPJ 0.44 answers false");
        w.Send(go, 0, 1, MPI.INT, 1, GO);
        Status p = w.Probe(1, 60);
        check(p.Get_count(MPI.INT) == 4, "the first message after the cancel waits unexpected: probed "
                + p.Get_count(MPI.INT) + " ints");
        int[] first = new int[4];
        w.Recv(first, 0, 4, MPI.INT, 1, 60);
        int[] second = new int[4];
        Status s2 = w.Irecv(second, 0, 4, MPI.INT, 1, 60).Wait();
        check(Arrays.equals(first, new int[] {1, 2, 3, 4}) && Arrays.equals(second, new int[] {5, 6, 7, 8})
                && s2.source == 1 && s2.tag == 60, "after the cancel: " + Arrays.toString(first) + " "
                + Arrays.toString(second));
        check(Arrays.equals(gone, new int[] {-1, -1, -1, -1}), "the cancelled receive was written: "
                + Arrays.toString(gone));

        // 2. Wildcard receives cancelled.
        int[][] wild = {{-1, -1, -1, -1}, {-1, -1, -1, -1}, {-1, -1, -1, -1}};
        Request[] ws = {w.Irecv(wild[0], 0, 4, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG),
                w.Irecv(wild[1], 0, 4, MPI.INT, MPI.ANY_SOURCE, 61), w.Irecv(wild[2], 0, 4, MPI.INT, 1, MPI.ANY_TAG)};
        for (Request r : ws) {
            r.Cancel();
            check(r.Is_null(), "a wildcard Irecv that no message matched yet was not cancelled");
            r.Wait();
        }
        w.Send(go, 0, 1, MPI.INT, 1, GO);
        int[] c = new int[4];
        Status sc = w.Recv(c, 0, 4, MPI.INT, MPI.ANY_SOURCE, 61);
        check(Arrays.equals(c, new int[] {9, 10, 11, 12}) && sc.source == 1 && sc.tag == 61, "after the wildcard "
                + "cancels: " + Arrays.toString(c) + " from " + sc.source + " tag " + sc.tag);
        for (int[] x : wild) {
            check(Arrays.equals(x, new int[] {-1, -1, -1, -1}), "a cancelled wildcard receive was written: "
                    + Arrays.toString(x));
        }

        // 3. Cancel after the receive matched: nothing happens, the data is there.
        w.Probe(1, 62);
        int[] d = new int[4];
        Request m = w.Irecv(d, 0, 4, MPI.INT, 1, 62);
        m.Cancel();
        check(!m.Is_null(), "a receive that had matched its message was cancelled");
        Status sm = m.Wait();
        check(Arrays.equals(d, new int[] {13, 14, 15, 16}) && sm.source == 1 && sm.tag == 62,
                "the matched receive: " + Arrays.toString(d));

        // 4. A cancel racing a large message.
        double[] big = new double[BIG];
        Arrays.fill(big, -1);
        Request r = w.Irecv(big, 0, BIG, MPI.DOUBLE, 1, 63);
        w.Send(go, 0, 1, MPI.INT, 1, GO);
        w.Recv(new int[1], 0, 1, MPI.INT, 1, 64);
        long until = System.nanoTime() + 5_000_000;
        while (System.nanoTime() < until) {
            w.Iprobe(1, 68); // moves the device on: the message may match the receive meanwhile, or be arriving
        }
        r.Cancel();
        boolean cancelled = r.Is_null();
        double[] got = big;
        if (cancelled) {
            for (double v : big) {
                check(v == -1, "a cancelled large receive was written");
            }
            got = new double[BIG];
            w.Recv(got, 0, BIG, MPI.DOUBLE, 1, 63);
        } else {
            r.Wait();
        }
        System.out.println("cancel: the 1 MiB receive was " + (cancelled ? "" : "not ")
                + "cancelled before its message matched it");
        for (int i = 0; i < BIG; i++) {
            if (got[i] != i) {
                throw new AssertionError("the 1 MiB message's element " + i + " is " + got[i]);
            }
        }
    }
}
