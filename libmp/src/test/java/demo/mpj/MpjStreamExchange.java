package demo.mpj;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.mpj.MpjOnStream;
import mpi.MPI;
import mpi.Request;

/**
 * An MPJ Express program that replaces one exchange by a stream's, the LibMP way, on MPJ's own connections: every rank
 * sends a number to the next rank of a ring with MPJ's Sendrecv, then sends the next number with a send that a host
 * stream rings (isendOnStream) and lets the stream wait for an ordinary MPJ receive (waitOnStream) before a task of
 * the stream uses the number. The CPU only prepares; the stream triggers and waits.
 *
 * <pre>mprun -np 3 --mpj --classpath target/classes demo.mpj.MpjStreamExchange</pre>
 */
public class MpjStreamExchange {
    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        int me = MPI.COMM_WORLD.Rank();
        int n = MPI.COMM_WORLD.Size();
        int next = (me + 1) % n;
        int prev = (me + n - 1) % n;

        // 1. MPJ, as the program was written.
        int[] got = new int[1];
        MPI.COMM_WORLD.Sendrecv(new int[] {100 + me}, 0, 1, MPI.INT, next, 0, got, 0, 1, MPI.INT, prev, 0);
        System.out.println("rank " + me + " (MPJ): got " + got[0] + " from rank " + prev);

        // 2. The same exchange, triggered by a stream: the CPU prepares, the stream sends and waits.
        int[] in = new int[1];
        int[] seen = new int[1];
        try (HostStream stream = HostStream.create("exchange-" + me)) {
            Request recv = MPI.COMM_WORLD.Irecv(in, 0, 1, MPI.INT, prev, 1);    // an ordinary MPJ receive
            Request send = MpjOnStream.isendOnStream(MPI.COMM_WORLD, new int[] {200 + me}, 0, 1, MPI.INT, next, 1,
                    stream);                                                  // packed now, rung by the stream
            MpjOnStream.waitOnStream(recv, stream);                           // the stream waits for the receive
            stream.launch(() -> seen[0] = in[0]);                             // a "kernel" that uses the number
            stream.synchronize();
            send.Wait();                                                      // the CPU reaps both requests
            recv.Wait();
        }
        System.out.println("rank " + me + " (stream): got " + seen[0] + " from rank " + prev);
        MPI.Finalize();
    }
}
