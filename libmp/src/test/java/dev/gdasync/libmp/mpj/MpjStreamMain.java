package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.stream.HostStream;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import mpi.Status;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;

/**
 * The program of {@link MpjOnStreamTest}: MPJ calls and {@link MpjOnStream}'s stream-triggered calls on 2 ranks, case
 * by case. Prints {@code OK CASE} or {@code FAIL CASE: WHY} per case and {@code DONE rank R of N}, as
 * {@link MpjConformanceMain} does.
 * <ul>
 *   <li>{@code order}: each rank in turn sends 400 messages to the other on tag 7, two of three rung by a stream and one
 *   of three a CPU {@code Send} in between (the array reused and changed after every call), and 100 more by the stream
 *   on tag 8; the other rank receives tag 8 first, then tag 7, all with plain {@code Recv}: every message byte-exact
 *   and in order (int, double and byte messages of 0 to 2000 elements); a byte message sent before them on a
 *   duplicate of {@code COMM_WORLD} with tag 7 is left to the end, found by a {@code Probe} there;</li>
 *   <li>{@code pingpong}: rank 0's stream runs 100 rounds posted at once (send the ping, wait for the pong's
 *   {@code Irecv}, a task that checks the pong's data), rank 1 answers with plain {@code Recv} and {@code Send}; then
 *   the CPU waits for every request and checks the statuses;</li>
 *   <li>{@code badargs}: every bad argument is refused with its message, and the exchange that follows works.</li>
 *   <li>{@code truncated}: a stream waits for an {@code Irecv} that a larger message fails: the stream fails with the
 *   receive's truncation error, and so does the CPU's {@code Wait} of it;</li>
 *   <li>{@code cancelled}: a stream waits for an {@code Irecv} that the CPU then cancels: the stream moves on (the
 *   task after its wait runs), the receive's array untouched; a later wait on the cancelled request is refused, and
 *   the message rank 1 sends afterwards on that tag goes to the next receive;</li>
 *   <li>{@code hosts}, on 4 ranks over two hosts (0 and 2 on one, 1 and 3 on the other): a stream send to the other
 *   host is refused with its message; a stream waits for a receive from the other host (a CPU send there) and sends
 *   50 messages to the rank of its own host, received with plain {@code Recv}.</li>
 * </ul>
 */
public final class MpjStreamMain {
    private MpjStreamMain() {
    }

    public static void main(String[] args) throws Exception {
        String[] cases = MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank();
        Map<String, Runnable> all = Map.of("order", MpjStreamMain::order, "pingpong", MpjStreamMain::pingPong,
                "badargs", MpjStreamMain::badArgs, "hosts", MpjStreamMain::hosts, "truncated", MpjStreamMain::truncated,
                "cancelled", MpjStreamMain::cancelled);
        for (String name : cases.length == 0 ? new String[] {"order", "pingpong", "badargs", "truncated", "cancelled"}
                : cases) {
            MPI.COMM_WORLD.Barrier();
            try {
                all.get(name).run();
                System.out.println("OK " + name);
            } catch (Throwable e) {
                System.out.println("FAIL " + name + ": " + e);
                e.printStackTrace(System.out);
            }
        }
        System.out.println("DONE rank " + rank + " of " + MPI.COMM_WORLD.Size());
        MPI.Finalize();
    }

    /** The elements of message {@code i}'s of the {@code order} case. */
    private static int length(int i) {
        return i % 17 == 0 ? 0 : (i * 37) % 2000;
    }

    private static void order() {
        int rank = MPI.COMM_WORLD.Rank();
        mpi.Intracomm dup = (mpi.Intracomm) MPI.COMM_WORLD.clone(); // its context keeps its messages apart
        for (int sender = 0; sender < 2; sender++) {
            if (rank == sender) {
                sendOrdered(1 - sender, dup);
            } else {
                receiveOrdered(sender, dup);
            }
            MPI.COMM_WORLD.Barrier();
        }
    }

    private static void sendOrdered(int peer, mpi.Intracomm dup) {
        int[] ints = new int[2000];
        double[] doubles = new double[2000];
        List<Request> sends = new ArrayList<>();
        try (HostStream stream = HostStream.create("order-" + MPI.COMM_WORLD.Rank())) {
            for (int i = 0; i < 100; i++) {
                fill(ints, i + 100_000);
                sends.add(MpjOnStream.isendOnStream(MPI.COMM_WORLD, ints, 3, 50, MPI.INT, peer, 8, stream));
                Arrays.fill(ints, -1); // packed at the call: the array is the program's again
            }
            byte[] bytes = new byte[255];
            for (int k = 0; k < bytes.length; k++) {
                bytes[k] = (byte) k;
            }
            // First, on the duplicate with tag 7: COMM_WORLD's receives of tag 7 must not take it.
            sends.add(MpjOnStream.isendOnStream(dup, bytes, 1, 254, MPI.BYTE, peer, 7, stream));
            for (int i = 0; i < 400; i++) {
                int n = length(i);
                if (i % 3 == 2) {
                    fill(ints, i);
                    MPI.COMM_WORLD.Send(ints, 0, n, MPI.INT, peer, 7);
                } else if (i % 5 == 0) {
                    for (int k = 0; k < n; k++) {
                        doubles[k] = i + k / 1000.0;
                    }
                    sends.add(MpjOnStream.isendOnStream(MPI.COMM_WORLD, doubles, 0, n, MPI.DOUBLE, peer, 7, stream));
                } else {
                    fill(ints, i);
                    sends.add(MpjOnStream.isendOnStream(MPI.COMM_WORLD, ints, 0, n, MPI.INT, peer, 7, stream));
                }
                Arrays.fill(ints, -1);
                Arrays.fill(doubles, -1);
            }
            for (Request r : sends) {
                Status s = r.Wait(); // complete once the stream rang it
                check(s.source == peer, () -> "a stream send's status names rank " + s.source + ", not " + peer);
            }
            stream.synchronize();
        }
    }

    private static void fill(int[] a, int i) {
        for (int k = 0; k < a.length; k++) {
            a[k] = i * 1_000_003 + k;
        }
    }

    private static void receiveOrdered(int peer, mpi.Intracomm dup) {
        int[] ints = new int[2000];
        double[] doubles = new double[2000];
        for (int i = 0; i < 100; i++) {
            Status s = MPI.COMM_WORLD.Recv(ints, 0, 2000, MPI.INT, peer, 8);
            check(s.Get_count(MPI.INT) == 50, () -> "tag 8 message has " + s.Get_count(MPI.INT) + " ints");
            for (int k = 0; k < 50; k++) {
                int want = (i + 100_000) * 1_000_003 + 3 + k;
                int at = k;
                int n = i;
                check(ints[k] == want, () -> "tag 8 message " + n + " element " + at + ": " + ints[at] + ", not " + want);
            }
        }
        for (int i = 0; i < 400; i++) {
            int n = length(i);
            int msg = i;
            if (i % 3 != 2 && i % 5 == 0) {
                Status s = MPI.COMM_WORLD.Recv(doubles, 0, 2000, MPI.DOUBLE, peer, 7);
                check(s.Get_count(MPI.DOUBLE) == n, () -> "message " + msg + ": " + s.Get_count(MPI.DOUBLE) + " doubles, not " + n);
                for (int k = 0; k < n; k++) {
                    int at = k;
                    check(doubles[k] == i + k / 1000.0, () -> "message " + msg + " element " + at + ": " + doubles[at]);
                }
            } else {
                Status s = MPI.COMM_WORLD.Recv(ints, 0, 2000, MPI.INT, peer, 7);
                check(s.Get_count(MPI.INT) == n, () -> "message " + msg + " (" + (msg % 3 == 2 ? "CPU" : "stream")
                        + "): " + s.Get_count(MPI.INT) + " ints, not " + n + " (out of order?)");
                for (int k = 0; k < n; k++) {
                    int at = k;
                    check(ints[k] == i * 1_000_003 + k, () -> "message " + msg + " element " + at + ": " + ints[at]
                            + " (out of order?)");
                }
            }
        }
        // The byte message went on the duplicate with tag 7 before every COMM_WORLD message of tag 7: a probe there
        // finds it now.
        Status probed = dup.Probe(peer, 7);
        check(probed.Get_count(MPI.BYTE) == 254, () -> "the probe of the byte message: " + probed.Get_count(MPI.BYTE));
        byte[] bytes = new byte[300];
        Status s = dup.Recv(bytes, 0, 300, MPI.BYTE, peer, 7);
        check(s.Get_count(MPI.BYTE) == 254 && s.tag == 7, () -> "the byte message: " + s.Get_count(MPI.BYTE) + " bytes");
        for (int k = 0; k < 254; k++) {
            int at = k;
            check(bytes[k] == (byte) (k + 1), () -> "byte " + at + ": " + bytes[at]);
        }
    }

    private static void pingPong() {
        int rank = MPI.COMM_WORLD.Rank();
        int rounds = 100;
        if (rank == 1) {
            long[] ping = new long[8];
            for (int i = 0; i < rounds; i++) {
                MPI.COMM_WORLD.Recv(ping, 0, 8, MPI.LONG, 0, 20);
                for (int k = 0; k < 8; k++) {
                    int at = k;
                    int round = i;
                    long want = i * 100L + k;
                    check(ping[k] == want, () -> "ping " + round + " element " + at + ": " + ping[at] + ", not " + want);
                    ping[k] = -ping[k];
                }
                MPI.COMM_WORLD.Send(ping, 0, 8, MPI.LONG, 0, 21);
            }
            return;
        }
        long[] ping = new long[8];
        long[][] pongs = new long[rounds][8];
        Request[] receives = new Request[rounds];
        Request[] sends = new Request[rounds];
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        int[] checked = new int[1];
        try (HostStream stream = HostStream.create("pingpong")) {
            for (int i = 0; i < rounds; i++) {
                receives[i] = MPI.COMM_WORLD.Irecv(pongs[i], 0, 8, MPI.LONG, 1, 21);
                for (int k = 0; k < 8; k++) {
                    ping[k] = i * 100L + k;
                }
                sends[i] = MpjOnStream.isendOnStream(MPI.COMM_WORLD, ping, 0, 8, MPI.LONG, 1, 20, stream);
                MpjOnStream.waitOnStream(receives[i], stream);
                int round = i;
                stream.launch(() -> { // runs once the pong is in pongs[round]: MPJ unpacked it before the wait ended
                    for (int k = 0; k < 8; k++) {
                        if (pongs[round][k] != -(round * 100L + k)) {
                            wrong.add("pong " + round + " element " + k + ": " + pongs[round][k]);
                        }
                    }
                    checked[0]++;
                });
            }
            stream.synchronize();
        }
        check(wrong.isEmpty(), () -> "the stream's task saw " + wrong);
        check(checked[0] == rounds, () -> checked[0] + " rounds checked by the stream, not " + rounds);
        for (int i = 0; i < rounds; i++) {
            Status s = receives[i].Wait();
            int round = i;
            check(s.source == 1 && s.tag == 21 && s.Get_count(MPI.LONG) == 8, () -> "pong " + round + "'s status: source "
                    + s.source + " tag " + s.tag);
            sends[i].Wait();
        }
    }

    private static void badArgs() {
        int rank = MPI.COMM_WORLD.Rank();
        int peer = 1 - rank;
        int[] a = new int[8];
        HostStream closed = HostStream.create("closed");
        closed.close();
        try (HostStream stream = HostStream.create("badargs-" + rank)) {
            String s = "isendOnStream: ";
            expect(s + "the communicator is null", () -> MpjOnStream.isendOnStream(null, a, 0, 1, MPI.INT, peer, 1, stream));
            expect(s + "the stream is null", () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 1, MPI.INT, peer, 1, null));
            expect(s + "stream 'closed' is closed",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 1, MPI.INT, peer, 1, closed));
            expect(s + "the buffer is null", () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, null, 0, 1, MPI.INT, peer, 1, stream));
            expect(s + "MPI.INT needs an array of type int[], got long[]",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, new long[8], 0, 1, MPI.INT, peer, 1, stream));
            expect(s + "offset 4 and count 5 reach outside the int[] buffer of 8 elements",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 4, 5, MPI.INT, peer, 1, stream));
            expect(s + "offset 0 and count -1 reach outside the int[] buffer of 8 elements",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, -1, MPI.INT, peer, 1, stream));
            expect(s + "destination 2 is not a rank of the communicator (ranks 0..1)",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 1, MPI.INT, 2, 1, stream));
            expect(s + "the tag must be at least 0, got -3",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 1, MPI.INT, peer, -3, stream));
            expect(s + "MPI.OBJECT is not supported on a stream: the primitive types are (MPI.BYTE, CHAR, SHORT, BOOLEAN, "
                            + "INT, LONG, FLOAT, DOUBLE); send the others with Isend",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, new Object[1], 0, 1, MPI.OBJECT, peer, 1, stream));
            expect(s + "a derived or pair datatype is not supported on a stream: the primitive types are (MPI.BYTE, CHAR, "
                            + "SHORT, BOOLEAN, INT, LONG, FLOAT, DOUBLE); send the others with Isend",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 1, mpi.Datatype.Contiguous(2, MPI.INT), peer, 1, stream));
            expect(s + "the datatype is null", () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 1, null, peer, 1, stream));
            expect("isendOnStream to rank " + rank + " tag 1: that is this rank; a stream rings sends to other ranks only "
                            + "(send this rank's messages to itself with Isend)",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 1, MPI.INT, rank, 1, stream));
            expect("isendOnStream to rank " + peer + " tag 1: the message packs into 40008 bytes, more than one slot holds "
                            + "(32728 bytes after the header; gdasync.mpj.slot.bytes); a stream sends one-slot messages "
                            + "only: send larger ones with Isend",
                    () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, new int[10_000], 0, 10_000, MPI.INT, peer, 1, stream));
            String w = "waitOnStream: ";
            expect(w + "the request is null", () -> { MpjOnStream.waitOnStream(null, stream); return null; });
            Request r = MPI.COMM_WORLD.Isend(a, 0, 1, MPI.INT, peer, 30);
            expect(w + "the stream is null", () -> { MpjOnStream.waitOnStream(r, null); return null; });
            expect(w + "stream 'closed' is closed", () -> { MpjOnStream.waitOnStream(r, closed); return null; });
            r.Wait();
            expect(w + "the request is MPI.REQUEST_NULL, was cancelled, or was completed by a Wait or Test already",
                    () -> { MpjOnStream.waitOnStream(r, stream); return null; });
            // Nothing changed: the exchange that follows works, with one message each way on the stream.
            int[] got = new int[1];
            MPI.COMM_WORLD.Recv(got, 0, 1, MPI.INT, peer, 30);
            Request recv = MPI.COMM_WORLD.Irecv(got, 0, 1, MPI.INT, peer, 31);
            Request send = MpjOnStream.isendOnStream(MPI.COMM_WORLD, new int[] {500 + rank}, 0, 1, MPI.INT, peer, 31,
                    stream);
            MpjOnStream.waitOnStream(recv, stream);
            stream.synchronize();
            send.Wait();
            recv.Wait();
            check(got[0] == 500 + peer, () -> "after the refusals: got " + got[0]);
        }
    }

    private static void truncated() {
        int rank = MPI.COMM_WORLD.Rank();
        if (rank == 1) {
            MPI.COMM_WORLD.Send(new int[10], 0, 10, MPI.INT, 0, 40);
            return;
        }
        int[] small = new int[4];
        Request r = MPI.COMM_WORLD.Irecv(small, 0, 4, MPI.INT, 1, 40);
        try (HostStream stream = HostStream.create("truncated")) {
            MpjOnStream.waitOnStream(r, stream);
            try {
                stream.synchronize();
                throw new AssertionError("the stream passed a wait for a receive that failed");
            } catch (dev.gdasync.gdsync.stream.StreamFailedException e) {
                Throwable cause = e.getCause();
                check(cause instanceof xdev.XDevException && cause.getMessage().startsWith("message truncated "
                        + "(MPI_ERR_TRUNCATE): RECEIVE from rank 1 tag 40"), () -> "the stream's failure: " + e);
            }
        }
        try {
            r.Wait();
            throw new AssertionError("the CPU's Wait of the failed receive returned");
        } catch (xdev.XDevException e) { // MPJ's Request.Wait passes the device's exception on as it is
            check(String.valueOf(e.getMessage()).contains("message truncated (MPI_ERR_TRUNCATE)"), () -> "Wait: " + e);
        }
    }

    private static void cancelled() {
        int rank = MPI.COMM_WORLD.Rank();
        int[] go = new int[1];
        if (rank == 1) {
            MPI.COMM_WORLD.Recv(go, 0, 1, MPI.INT, 0, 42); // rank 0 cancelled its receive
            MPI.COMM_WORLD.Send(new int[] {5, 6, 7, 8}, 0, 4, MPI.INT, 0, 41);
            return;
        }
        int[] never = {-1, -1, -1, -1};
        Request r = MPI.COMM_WORLD.Irecv(never, 0, 4, MPI.INT, 1, 41);
        boolean[] ran = new boolean[1];
        try (HostStream stream = HostStream.create("cancelled")) {
            MpjOnStream.waitOnStream(r, stream);
            stream.launch(() -> ran[0] = true);
            r.Cancel();
            check(r.Is_null(), () -> "the Irecv no message matched yet was not cancelled");
            stream.synchronize(); // would hang if the cancel left the stream's wait waiting
        }
        check(ran[0], () -> "the stream's task after the wait for the cancelled receive did not run");
        try (HostStream stream = HostStream.create("cancelled-again")) {
            expect("waitOnStream: the request is MPI.REQUEST_NULL, was cancelled, or was completed by a Wait or Test "
                    + "already", () -> {
                MpjOnStream.waitOnStream(r, stream);
                return null;
            });
        }
        MPI.COMM_WORLD.Send(go, 0, 1, MPI.INT, 1, 42);
        int[] got = new int[4];
        MPI.COMM_WORLD.Recv(got, 0, 4, MPI.INT, 1, 41);
        check(Arrays.equals(got, new int[] {5, 6, 7, 8}), () -> "after the cancel: " + Arrays.toString(got));
        check(Arrays.equals(never, new int[] {-1, -1, -1, -1}), () -> "the cancelled receive was written: "
                + Arrays.toString(never));
    }

    private static void hosts() {
        int rank = MPI.COMM_WORLD.Rank();
        int near = rank ^ 2;
        int far = rank ^ 1;
        int[] a = new int[4];
        int[] fromFar = new int[4];
        List<Request> sends = new ArrayList<>();
        try (HostStream stream = HostStream.create("hosts-" + rank)) {
            String refused = "isendOnStream to rank " + far + " tag 1: rank " + far + " is on another host, where stream "
                    + "sends are not supported yet (this rank's credits and rendezvous reads to it share the queue pair, "
                    + "and would wait behind the stream's send)";
            expect(refused, () -> MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 4, MPI.INT, far, 1, stream));
            Request receive = MPI.COMM_WORLD.Irecv(fromFar, 0, 4, MPI.INT, far, 2);
            MPI.COMM_WORLD.Send(new int[] {rank, rank + 1, rank + 2, rank + 3}, 0, 4, MPI.INT, far, 2);
            MpjOnStream.waitOnStream(receive, stream);
            for (int i = 0; i < 50; i++) {
                for (int k = 0; k < 4; k++) {
                    a[k] = rank * 1000 + i * 4 + k;
                }
                sends.add(MpjOnStream.isendOnStream(MPI.COMM_WORLD, a, 0, 4, MPI.INT, near, 3, stream));
            }
            int[] got = new int[4];
            for (int i = 0; i < 50; i++) {
                MPI.COMM_WORLD.Recv(got, 0, 4, MPI.INT, near, 3);
                for (int k = 0; k < 4; k++) {
                    int at = k;
                    int want = near * 1000 + i * 4 + k;
                    check(got[k] == want, () -> "from rank " + near + ": " + got[at] + ", not " + want);
                }
            }
            stream.synchronize();
            for (Request r : sends) {
                r.Wait();
            }
            receive.Wait();
            for (int k = 0; k < 4; k++) {
                int at = k;
                check(fromFar[k] == far + k, () -> "from rank " + far + " (other host): " + fromFar[at]);
            }
        }
    }

    private static void expect(String message, Supplier<Object> call) {
        try {
            call.get();
        } catch (MPIException e) {
            check(message.equals(e.getMessage()), () -> "expected '" + message + "', got '" + e.getMessage() + "'");
            return;
        }
        throw new AssertionError("no exception, expected '" + message + "'");
    }

    private static void check(boolean ok, Supplier<String> why) {
        if (!ok) {
            throw new AssertionError(why.get());
        }
    }
}
