package demo.mpj;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.mpj.MpjGdasync;
import mpi.MPI;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An MPJ Express program that replaces one exchange by libmp calls in the same process, over the same NIC and
 * connections: every rank sends a number to the next rank of a ring with MPJ's Sendrecv, then sends the next number
 * with libmp's own two-sided calls the LibMP way: the CPU posts the receive, a host stream fills the message, rings
 * its send (isendOnStream) and waits for the receive (waitOnStream) before a task of the stream uses the number.
 *
 * <pre>mprun -np 3 --mpj --classpath target/classes demo.mpj.MpjAndLibmp</pre>
 */
public class MpjAndLibmp {
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

        // 2. The same exchange the LibMP way, on the Mp that carries MPJ's messages: the CPU posts the receive and
        //    prepares, a stream fills the message, rings the send and waits for the receive.
        Mp mp = MpjGdasync.mp();
        MemorySegment buf = mp.allocate(64);
        MpRegistration reg = mp.register(buf);
        MemorySegment in = buf.asSlice(0, 4);
        MemorySegment out = buf.asSlice(8, 4);
        MpRequest recv = mp.irecv(in, prev, reg);                  // mp_irecv
        MPI.COMM_WORLD.Barrier();                                  // every receive is posted before its send
        int[] seen = new int[1];
        try (HostStream stream = HostStream.create("ring-" + me)) {
            stream.launch(() -> out.set(ValueLayout.JAVA_INT, 0, 200 + me));      // a "kernel" fills it
            MpRequest send = mp.isendOnStream(out, next, reg, stream);            // mp_isend_on_stream
            mp.waitOnStream(recv, stream);                                        // mp_wait_on_stream
            stream.launch(() -> seen[0] = in.get(ValueLayout.JAVA_INT, 0));      // a "kernel" uses it
            stream.synchronize();
            mp.waitAll(recv, send);                                               // the CPU reaps both
        }
        System.out.println("rank " + me + " (libmp isendOnStream): got " + seen[0] + " from rank " + prev);
        MPI.Finalize();
    }
}
