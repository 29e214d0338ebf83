package dev.gdasync.apps.gabench;

import dev.gdasync.apps.common.MpjProgram;
import mpi.Intracomm;
import mpi.MPI;

import java.util.Arrays;
import java.util.Locale;

/**
 * The two-sided baseline, run by {@link MpjRunner} under MPJ Express's starter ({@code -dev multicore}): the same
 * patches moved with blocking {@code Send}/{@code Recv} of byte arrays between rank 0's dense buffer and rank 1's block
 * laid out as the arrays' (contiguous, or rows of {@code 2 * runBytes}). A put is the data message plus a 1-byte
 * acknowledgement once rank 1 holds the bytes in place (the completion a one-sided put waits for); a get is a 1-byte
 * request and the data. Strided patches are unpacked into (put) or packed from (get) the rows by rank 1, as a two-sided
 * owner must. Rank 0 prints one {@value #RESULT} line per layout, operation and size; a failed rank prints {@value
 * #ERROR} and exits the JVM with status 3 (a rank that merely threw would leave its peer blocked in {@code Recv}).
 */
public final class MpjGaBench {
    static final String RESULT = "GABENCH-MPJ-RESULT";
    static final String ERROR = "GABENCH-MPJ-ERROR";
    private static final int TAG = 19;

    private MpjGaBench() {
    }

    /**
     * @param args MPJ's arguments, then the plan's ({@link Plan#args})
     */
    public static void main(String[] args) {
        MpjProgram.main(args, ERROR, mine -> new MpjGaBench.Side(MPI.COMM_WORLD, Plan.parse(mine)).run());
    }

    /** One rank's buffers and loops. */
    private static final class Side {
        final Intracomm world;
        final int rank;
        final Plan plan;
        final Geometry geo;
        final byte[] src;
        final byte[] dst;
        final byte[] block;
        final byte[] pack;
        final byte[] one = new byte[1];

        Side(Intracomm world, Plan plan) throws Exception {
            if (world.Size() != 2) {
                throw new IllegalStateException("the MPJ baseline runs with 2 ranks, not " + world.Size());
            }
            this.world = world;
            this.rank = world.Rank();
            this.plan = plan;
            this.geo = plan.geometry();
            int max = geo.maxBytes();
            src = new byte[rank == 0 ? max : 1];
            dst = new byte[rank == 0 ? max : 1];
            block = new byte[rank == 1 ? (int) geo.windowBytes() : 1];
            pack = new byte[rank == 1 ? max : 1];
        }

        void run() throws Exception {
            int first = plan.sizes().getFirst();
            long start = System.nanoTime();
            int[] going = new int[1];
            for (;;) {
                going[0] = System.nanoTime() - start < plan.warmupMillis() * 1_000_000 ? 1 : 0;
                world.Bcast(going, 0, 1, MPI.INT, 0);
                if (going[0] == 0) {
                    break;
                }
                for (boolean strided : new boolean[] {false, true}) {
                    time(true, strided, first, plan.iters(first));
                    time(false, strided, first, plan.iters(first));
                }
            }
            int sizeIndex = 0;
            for (int bytes : plan.sizes()) {
                int iters = plan.iters(bytes);
                for (String layout : new String[] {"contig", "strided"}) {
                    double[] put = new double[plan.reps()];
                    double[] get = new double[plan.reps()];
                    boolean strided = layout.equals("strided");
                    for (int rep = -1; rep < plan.reps(); rep++) {
                        long generation = (long) sizeIndex * 1000 + rep + 2;
                        if (rank == 0) {
                            fill(src, bytes, generation);
                            Arrays.fill(dst, 0, bytes, (byte) 0xA5);
                        }
                        double p = time(true, strided, bytes, iters);
                        if (rank == 1) {
                            checkBlock(strided, bytes, generation);
                        }
                        double g = time(false, strided, bytes, iters);
                        if (rank == 0 && Arrays.mismatch(src, 0, bytes, dst, 0, bytes) >= 0) {
                            throw new IllegalStateException("data check failed: mpj " + layout + " get of " + bytes + " bytes");
                        }
                        if (rep >= 0) {
                            put[rep] = p;
                            get[rep] = g;
                        }
                    }
                    if (rank == 0) {
                        int runs = strided ? geo.runs(bytes) : 1;
                        System.out.println(format(new Row("mpj", layout, "put", bytes, runs, iters, put)));
                        System.out.println(format(new Row("mpj", layout, "get", bytes, runs, iters, get)));
                        System.out.flush();
                    }
                }
                sizeIndex++;
            }
        }

        /** @return microseconds per operation (rank 0's clock) */
        double time(boolean put, boolean strided, int bytes, int iters) throws Exception {
            world.Barrier();
            long start = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                if (rank == 0) {
                    if (put) {
                        world.Send(src, 0, bytes, MPI.BYTE, 1, TAG);
                        world.Recv(one, 0, 1, MPI.BYTE, 1, TAG);
                    } else {
                        world.Send(one, 0, 1, MPI.BYTE, 1, TAG);
                        world.Recv(dst, 0, bytes, MPI.BYTE, 1, TAG);
                    }
                } else if (put) {
                    if (strided) {
                        world.Recv(pack, 0, bytes, MPI.BYTE, 0, TAG);
                        copyRuns(bytes, true);
                    } else {
                        world.Recv(block, 0, bytes, MPI.BYTE, 0, TAG);
                    }
                    world.Send(one, 0, 1, MPI.BYTE, 0, TAG);
                } else {
                    world.Recv(one, 0, 1, MPI.BYTE, 0, TAG);
                    if (strided) {
                        copyRuns(bytes, false);
                        world.Send(pack, 0, bytes, MPI.BYTE, 0, TAG);
                    } else {
                        world.Send(block, 0, bytes, MPI.BYTE, 0, TAG);
                    }
                }
            }
            return (System.nanoTime() - start) / 1e3 / iters;
        }

        /** Rank 1: the packed patch into its rows (unpack), or its rows into the packed patch. */
        void copyRuns(int bytes, boolean unpack) {
            int run = geo.run(bytes);
            for (int i = 0; i < geo.runs(bytes); i++) {
                int at = (int) geo.runOffset(i);
                if (unpack) {
                    System.arraycopy(pack, i * run, block, at, run);
                } else {
                    System.arraycopy(block, at, pack, i * run, run);
                }
            }
        }

        void checkBlock(boolean strided, int bytes, long generation) {
            byte[] want = new byte[bytes];
            fill(want, bytes, generation);
            byte[] got = new byte[bytes];
            if (strided) {
                int run = geo.run(bytes);
                for (int i = 0; i < geo.runs(bytes); i++) {
                    System.arraycopy(block, (int) geo.runOffset(i), got, i * run, run);
                }
            } else {
                System.arraycopy(block, 0, got, 0, bytes);
            }
            if (!Arrays.equals(want, got)) {
                throw new IllegalStateException("data check failed: mpj " + (strided ? "strided" : "contig") + " put of "
                        + bytes + " bytes");
            }
        }
    }

    static void fill(byte[] b, int bytes, long generation) {
        for (int i = 0; i < bytes; i++) {
            b[i] = (byte) (generation * 31 + i * 7 + (i >>> 8));
        }
    }

    /** @return the result line for a row */
    static String format(Row r) {
        StringBuilder reps = new StringBuilder();
        for (double us : r.repMicros()) {
            reps.append(reps.isEmpty() ? "" : ",").append(String.format(Locale.ROOT, "%.6f", us));
        }
        return String.join(" ", RESULT, r.layout(), r.op(), String.valueOf(r.bytes()), String.valueOf(r.runs()),
                String.valueOf(r.iters()), reps);
    }

    /** @return the row of a result line */
    static Row parse(String line) {
        String[] f = line.split(" ");
        if (f.length != 7 || !f[0].equals(RESULT)) {
            throw new IllegalArgumentException("malformed MPJ result line: " + line);
        }
        double[] reps = Arrays.stream(f[6].split(",")).mapToDouble(Double::parseDouble).toArray();
        return new Row("mpj", f[1], f[2], Integer.parseInt(f[3]), Integer.parseInt(f[4]), Integer.parseInt(f[5]), reps);
    }
}
