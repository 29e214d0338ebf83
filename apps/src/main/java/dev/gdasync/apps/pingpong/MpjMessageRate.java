package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.MpjProgram;
import mpi.Intracomm;
import mpi.MPI;
import mpi.Request;

import java.util.Locale;

/**
 * The {@code mpj} reference of the message rate: {@link HostRateLoop}'s pattern with MPJ Express's {@code Isend},
 * {@code Irecv} and {@code Waitall} on byte arrays, run by {@link MpjMode} under MPJ's starter with the multicore
 * device. Rank 0 prints one {@value #RESULT} line per size ({@link #format}); on failure a rank prints
 * {@value MpjPingPong#ERROR} and the message and exits the JVM with status 3.
 */
public final class MpjMessageRate {
    static final String RESULT = "MPJ-MSGRATE-RESULT";
    private static final int TAG = 8;
    private static final int ACK_TAG = 9;

    private MpjMessageRate() {
    }

    /**
     * @param args MPJ's arguments, then the benchmark's ({@code --sizes ... --window ... --iters ...})
     */
    public static void main(String[] args) {
        MpjProgram.main(args, MpjPingPong.ERROR, mine -> run(RateOptions.parse(mine)));
    }

    private static void run(RateOptions o) throws Exception {
        Intracomm world = MPI.COMM_WORLD;
        if (world.Size() != 2) {
            throw new IllegalStateException("the MPJ message rate runs with 2 ranks, not " + world.Size());
        }
        int rank = world.Rank();
        byte[] buf = new byte[o.maxBytes()];
        byte[] ack = new byte[HostRateLoop.ACK_BYTES];
        Request[] reqs = new Request[o.window()];
        int[] decision = new int[1];
        RoundTrips trips = new RoundTrips();
        for (int s = -1; s < o.sizes().size(); s++) {
            // s = -1: the first size's longer warm-up
            int bytes = o.sizes().get(Math.max(0, s));
            long warm = s < 0 ? (long) (o.warmupSeconds() * 1e9) : (long) (o.warmupSeconds() * 1e9 / 3);
            long t0 = System.nanoTime();
            for (;;) {
                decision[0] = System.nanoTime() - t0 < warm ? 1 : 0;
                world.Bcast(decision, 0, 1, MPI.INT, 0);
                if (decision[0] == 0) {
                    break;
                }
                window(world, rank, buf, ack, reqs, bytes, Math.min(o.iters(), Measurement.WARMUP_CHUNK), trips);
                trips.reset();
            }
            if (s < 0) {
                continue;
            }
            long[] runs = new long[o.reps()];
            for (int r = 0; r < runs.length; r++) {
                runs[r] = window(world, rank, buf, ack, reqs, bytes, o.iters(), trips);
            }
            if (rank == 0) {
                System.out.println(format(RateResult.of("mpj", bytes, o.window(), o.iters(), runs, trips.histogram())));
                System.out.flush();
            }
            trips.reset();
        }
    }

    private static long window(Intracomm world, int rank, byte[] buf, byte[] ack, Request[] reqs, int bytes, int iters,
                               RoundTrips trips) throws Exception {
        world.Barrier();
        long start = System.nanoTime();
        trips.begin(start);
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                for (int k = 0; k < reqs.length; k++) {
                    reqs[k] = world.Isend(buf, 0, bytes, MPI.BYTE, 1, TAG);
                }
                Request.Waitall(reqs);
                world.Recv(ack, 0, ack.length, MPI.BYTE, 1, ACK_TAG);
                trips.lap();
            } else {
                for (int k = 0; k < reqs.length; k++) {
                    reqs[k] = world.Irecv(buf, 0, bytes, MPI.BYTE, 0, TAG);
                }
                Request.Waitall(reqs);
                world.Send(ack, 0, ack.length, MPI.BYTE, 0, ACK_TAG);
            }
        }
        return System.nanoTime() - start;
    }

    /**
     * @param r a row
     * @return {@code MPJ-MSGRATE-RESULT bytes window iters msgs_per_s run_min run_max window_p50_us window_p99_us}
     */
    static String format(RateResult r) {
        return String.format(Locale.ROOT, "%s %d %d %d %.3f %.3f %.3f %.6f %.6f", RESULT, r.bytes(), r.window(), r.iters(),
                r.messagesPerSecond(), r.runMin(), r.runMax(), r.windowP50Micros(), r.windowP99Micros());
    }

    /**
     * @param line a line of {@link #format}
     * @return its row
     * @throws IllegalArgumentException if it is not one
     */
    static RateResult parse(String line) {
        String[] f = line.split(" ");
        if (f.length != 9) {
            throw new IllegalArgumentException("malformed MPJ result line: " + line);
        }
        return new RateResult("mpj", Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                Double.parseDouble(f[4]), Double.parseDouble(f[5]), Double.parseDouble(f[6]), Double.parseDouble(f[7]),
                Double.parseDouble(f[8]));
    }
}
