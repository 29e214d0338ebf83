package dev.gdasync.apps.collectives;

import java.util.Locale;

/**
 * The collectives the benchmark measures, in its order, all on int32 data, and what a size means for each: the bytes
 * a rank puts in.
 */
enum BenchCollective {
    /** SUM, in place (MPJ Express: out of place, it has no in-place form); bytes: the vector. */
    ALLREDUCE,
    /** Out of place; bytes: the whole send buffer (bytes / ranks to each rank). */
    ALLTOALL,
    /** In place, the rank's block of the receive buffer (MPJ Express: out of place); bytes: the rank's block. */
    ALLGATHER,
    /** From rank 0; bytes: the buffer. */
    BCAST,
    /** No data: one row per method at 0 bytes. */
    BARRIER;

    /** @return the name in the table, the CSV, the plots' files and the child jobs' arguments */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param label a {@link #label()}
     * @return its collective
     * @throws IllegalArgumentException for any other text
     */
    static BenchCollective of(String label) {
        for (BenchCollective c : values()) {
            if (c.label().equals(label)) {
                return c;
            }
        }
        throw new IllegalArgumentException("no collective '" + label + "'");
    }

    /** @return whether it moves data (all but the barrier) */
    boolean sized() {
        return this != BARRIER;
    }

    /**
     * @param bytes the bytes a rank puts in
     * @param ranks the ranks
     * @return the call's count (MPI's and NCCL's: elements per rank pair for alltoall, per rank for allgather), 0 for
     * the barrier or where the bytes do not fill one int32 per rank
     */
    long count(long bytes, int ranks) {
        return switch (this) {
            case ALLTOALL -> bytes / 4 / ranks;
            case BARRIER -> 0;
            default -> bytes / 4;
        };
    }

    /**
     * @param count the call's count
     * @param ranks the ranks
     * @return the int32 elements of the buffer the result lands in
     */
    long resultInts(long count, int ranks) {
        return switch (this) {
            case ALLTOALL, ALLGATHER -> count * ranks;
            case BARRIER -> 0;
            default -> count;
        };
    }

    /**
     * @param me    the rank
     * @param n     the ranks
     * @param count the call's count
     * @param i     an element of the result buffer
     * @return what it must hold on rank {@code me} after a call whose inputs were {@link ProgramCheck#in} of their rank
     * (bcast: of rank 0)
     */
    int expected(int me, int n, long count, long i) {
        return switch (this) {
            case ALLREDUCE -> {
                int want = 0;
                for (int r = 0; r < n; r++) {
                    want += ProgramCheck.in(r, i);
                }
                yield want;
            }
            case ALLTOALL -> ProgramCheck.in((int) (i / count), me * count + i % count);
            case ALLGATHER -> ProgramCheck.in((int) (i / count), i % count);
            case BCAST -> ProgramCheck.in(0, i);
            case BARRIER -> throw new IllegalArgumentException("a barrier has no result");
        };
    }
}
