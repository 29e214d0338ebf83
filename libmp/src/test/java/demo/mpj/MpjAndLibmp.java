package demo.mpj;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.mpj.MpjGdasync;
import mpi.MPI;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An MPJ Express program that replaces one exchange by libmp calls in the same process, over the same NIC and
 * connections: every rank sends a number to the next rank of a ring with MPJ's Sendrecv, then puts the next number
 * into the next rank's window from a host stream (the stream fills the message and rings the put), and MPJ's
 * Barrier tells every rank that the puts it waits for are there.
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

        // 2. The same exchange as a put rung by a stream, through the Mp that carries MPJ's messages.
        Mp mp = MpjGdasync.mp();
        MemorySegment inbox = mp.allocate(64);
        MpWindow window = mp.windowCreate(inbox);                  // collective, like MPI_Win_create
        MemorySegment out = mp.allocate(64);
        MpRegistration reg = mp.register(out);
        try (HostStream stream = HostStream.create("put-" + me)) {
            stream.launch(() -> out.set(ValueLayout.JAVA_INT, 0, 200 + me));             // a "kernel" fills it
            MpRequest put = mp.iputOnStream(out.asSlice(0, 4), reg, next, 0, window, 0, stream); // the stream rings
            stream.synchronize();
            mp.wait(put);                                                              // the CPU reaps it
        }
        MPI.COMM_WORLD.Barrier();                                  // every rank's put is done
        System.out.println("rank " + me + " (libmp put): got " + inbox.get(ValueLayout.JAVA_INT, 0) + " from rank " + prev);
        mp.windowDestroy(window);
        MPI.Finalize();
    }
}
