package dev.gdasync.apps.collectives;

import java.util.ArrayList;
import java.util.List;

/**
 * One measured case: a collective at a size, with the collectives per rep and of the untimed warm-up rep before them.
 * The gdasync ranks, MPJ Express and Open MPI run the same cases (the child jobs get them as
 * {@code COLL:BYTES:ITERS:WARMUP} arguments).
 *
 * @param collective the collective
 * @param bytes      the bytes a rank puts in ({@link BenchCollective}); 0 for the barrier
 * @param iters      collectives per rep
 * @param warmup     collectives of the untimed rep before the timed ones, at least {@code iters}
 */
record BenchCase(BenchCollective collective, long bytes, int iters, int warmup) {

    /** Bytes a rep moves at most: large sizes get fewer collectives per rep, at least 2. */
    private static final long REP_BYTES = 64L << 20;

    /**
     * The cases of a run: each collective in its order at each size (the barrier once), leaving out sizes that do not
     * give every rank an int32 (alltoall 8 B on 4 ranks). Large sizes get fewer calls, timed and warm-up alike (64 MiB
     * moved a rep), never fewer than 2 timed ones, and a warm-up never shorter than a timed rep.
     *
     * @param sizes  bytes per rank
     * @param iters  collectives per rep at small sizes
     * @param warmup collectives of the warm-up rep at small sizes
     * @param ranks  the ranks
     * @return the cases
     */
    static List<BenchCase> plan(List<Long> sizes, int iters, int warmup, int ranks) {
        List<BenchCase> out = new ArrayList<>();
        for (BenchCollective c : BenchCollective.values()) {
            if (!c.sized()) {
                out.add(new BenchCase(c, 0, iters, Math.max(iters, warmup)));
                continue;
            }
            for (long bytes : sizes) {
                if (c.count(bytes, ranks) > 0) {
                    int n = (int) Math.max(2, Math.min(iters, REP_BYTES / bytes));
                    out.add(new BenchCase(c, bytes, n, (int) Math.max(n, Math.min(warmup, REP_BYTES / bytes))));
                }
            }
        }
        return out;
    }

    /** @return the call's count on {@code ranks} ranks */
    long count(int ranks) {
        return collective.count(bytes, ranks);
    }

    /** @return the child jobs' argument: {@code COLL:BYTES:ITERS:WARMUP} */
    String arg() {
        return collective.label() + ":" + bytes + ":" + iters + ":" + warmup;
    }

    /**
     * @param arg an {@link #arg()}
     * @return the case
     * @throws IllegalArgumentException if it is not one
     */
    static BenchCase parse(String arg) {
        String[] f = arg.split(":");
        if (f.length != 4) {
            throw new IllegalArgumentException("not COLL:BYTES:ITERS:WARMUP: " + arg);
        }
        return new BenchCase(BenchCollective.of(f[0]), Long.parseLong(f[1]), Integer.parseInt(f[2]),
                Integer.parseInt(f[3]));
    }
}
