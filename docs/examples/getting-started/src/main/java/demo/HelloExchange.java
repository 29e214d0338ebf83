package demo;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Every rank sends a number to the next rank of a ring and receives one from the previous rank, twice: as in MPI
 * (the CPU posts the receive, sends and waits), then stream-asynchronously (a host stream fills the message, rings
 * the send, waits for the receive and reads it; the CPU only prepares, then reaps).
 *
 * <pre>mprun -np 3 --classpath target/classes demo.HelloExchange</pre>
 */
public class HelloExchange {
    public static void main(String[] args) {
        // The launcher (or srun, or mpirun) put rank, size and the rendezvous in the environment.
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot)) {
            int me = mp.rank();
            int n = mp.size();
            if (n < 2) {
                System.err.println("HelloExchange needs 2 ranks or more: mprun -np 2 ...");
                System.exit(2);
            }
            int next = (me + 1) % n;
            int prev = (me + n - 1) % n;
            MemorySegment buf = mp.allocate(128);            // memory the NIC can reach
            MpRegistration reg = mp.register(buf);
            MemorySegment out = buf.asSlice(0, 64);
            MemorySegment in = buf.asSlice(64, 64);

            // 1. Host, the MPI model: mp_irecv, mp_isend, mp_wait.
            out.set(ValueLayout.JAVA_INT, 0, 100 + me);
            MpRequest recv = mp.irecv(in, prev, reg);
            MpRequest send = mp.isend(out, next, reg);
            mp.waitAll(recv, send);
            System.out.println("rank " + me + " (host): got " + in.get(ValueLayout.JAVA_INT, 0) + " from rank " + prev);

            // 2. On a stream: the stream runs the work in order, the CPU is off the critical path.
            try (HostStream stream = HostStream.create("hello-" + me)) {
                int[] got = new int[1];
                MpRequest recv2 = mp.irecv(in, prev, reg);
                stream.launch(() -> out.set(ValueLayout.JAVA_INT, 0, 200 + me));   // a "kernel" fills the message
                MpRequest send2 = mp.isendOnStream(out, next, reg, stream);        // the stream rings the send
                mp.waitOnStream(recv2, stream);                                    // and waits for the message
                stream.launch(() -> got[0] = in.get(ValueLayout.JAVA_INT, 0));     // runs once it arrived
                stream.synchronize();
                mp.waitAll(recv2, send2);                                          // the CPU reaps the requests
                System.out.println("rank " + me + " (stream): got " + got[0] + " from rank " + prev);
            }
            mp.barrier();
        }
    }
}
