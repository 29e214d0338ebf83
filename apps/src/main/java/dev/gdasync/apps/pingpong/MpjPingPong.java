package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.MpjProgram;
import mpi.Intracomm;
import mpi.MPI;
import mpi.Status;

import java.lang.foreign.MemorySegment;

/**
 * The {@code mpj} reference: the same ping-pong with MPJ Express's blocking {@code Send}/{@code Recv} on
 * byte arrays, run by {@link MpjMode} under MPJ's starter ({@code -dev multicore}: both ranks are threads
 * of one JVM) or on MPJ's niodev ({@link dev.gdasync.apps.common.NiodevStarter}: a JVM per rank). Same sizes, iterations, repetitions, warm-up, compute task and validation as the other
 * modes. Rank 0 prints one {@value #RESULT} line per size ({@link MpjMode#format}: the size, the median, the
 * distribution of every timed round trip and the runs' spread); on failure a
 * rank prints {@value #ERROR} and the message, and exits the JVM with status 3 (with the multicore
 * device a rank that merely threw would leave its peer blocked in {@code Recv}).
 */
public final class MpjPingPong {
    static final String RESULT = "MPJ-PINGPONG-RESULT";
    static final String ERROR = "MPJ-PINGPONG-ERROR";
    private static final int TAG = 7;

    private MpjPingPong() {
    }

    /**
     * @param args MPJ's arguments, then the ping-pong's ({@code --sizes ... --iters ...})
     */
    public static void main(String[] args) {
        MpjProgram.main(args, ERROR, mine -> run(PingPongOptions.parse(mine)));
    }

    private static void run(PingPongOptions o) throws Exception {
        Intracomm world = MPI.COMM_WORLD;
        if (world.Size() != 2) {
            throw new IllegalStateException("the MPJ ping-pong runs with 2 ranks, not " + world.Size());
        }
        Side s = new Side(world, o);
        RoundTrips warmTrips = new RoundTrips();
        s.warm(o.sizes().getFirst(), Math.min(o.iters(), Measurement.WARMUP_CHUNK), o.firstWarmupNanos(), warmTrips);
        for (int bytes : o.sizes()) {
            s.warm(bytes, Math.min(o.iters(), Measurement.WARMUP_CHUNK), o.sizeWarmupNanos(), warmTrips);
            long[] runs = new long[o.reps()];
            RoundTrips trips = new RoundTrips();
            for (int r = 0; r < runs.length; r++) {
                runs[r] = s.run(bytes, o.iters(), trips);
            }
            if (s.rank == 0) {
                Result row = Result.of("mpj", bytes, o.iters(), runs, trips.histogram());
                System.out.println(MpjMode.format(row));
                System.out.flush();
            }
        }
    }

    /** One rank's buffers and loop. */
    private static final class Side {
        final Intracomm world;
        final int rank;
        final int peer;
        final byte[] out;
        final byte[] in;
        final boolean validate;
        final long computeNanos;
        final int[] decision = new int[1];

        Side(Intracomm world, PingPongOptions o) throws Exception {
            this.world = world;
            this.rank = world.Rank();
            this.peer = 1 - rank;
            this.out = new byte[o.maxBytes()];
            this.in = new byte[o.maxBytes()];
            this.validate = o.validate();
            this.computeNanos = Math.round(o.computeMicros() * 1000);
        }

        void warm(int bytes, int iters, long nanos, RoundTrips trips) throws Exception {
            long start = System.nanoTime();
            for (;;) {
                decision[0] = System.nanoTime() - start < nanos ? 1 : 0;
                world.Bcast(decision, 0, 1, MPI.INT, 0);
                if (decision[0] == 0) {
                    return;
                }
                run(bytes, iters, trips);
                trips.reset();
            }
        }

        long run(int bytes, int iters, RoundTrips trips) throws Exception {
            MemorySegment outSeg = MemorySegment.ofArray(out).asSlice(0, bytes);
            MemorySegment inSeg = MemorySegment.ofArray(in).asSlice(0, bytes);
            String where = "mpj mode, rank " + rank;
            world.Barrier();
            long start = System.nanoTime();
            trips.begin(start);
            for (int i = 0; i < iters; i++) {
                if (rank == 0) {
                    if (validate) {
                        Pattern.fill(outSeg, i, rank);
                    }
                    world.Send(out, 0, bytes, MPI.BYTE, peer, TAG);
                    Status st = world.Recv(in, 0, bytes, MPI.BYTE, peer, TAG);
                    if (validate) {
                        Pattern.check(inSeg, i, peer, st.Get_count(MPI.BYTE), where);
                    }
                    Compute.spin(computeNanos);
                    trips.lap();
                } else {
                    Status st = world.Recv(in, 0, bytes, MPI.BYTE, peer, TAG);
                    if (validate) {
                        Pattern.check(inSeg, i, peer, st.Get_count(MPI.BYTE), where);
                    }
                    Compute.spin(computeNanos);
                    if (validate) {
                        Pattern.fill(outSeg, i, rank);
                    }
                    world.Send(out, 0, bytes, MPI.BYTE, peer, TAG);
                }
            }
            return System.nanoTime() - start;
        }
    }
}
