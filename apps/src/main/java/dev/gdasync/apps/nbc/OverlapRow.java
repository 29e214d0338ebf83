package dev.gdasync.apps.nbc;

import dev.gdasync.libmp.coll.Overlap;

/**
 * One measured point: the median over iterations, then the mean over ranks (OSU's "avg"), in microseconds per
 * iteration.
 *
 * @param coll    the collective
 * @param engine  {@code host} or {@code offload}
 * @param bytes   the message size (per pair for alltoall, per rank for allgather, the whole for bcast)
 * @param ranks   the ranks
 * @param iters   timed iterations
 * @param overall the overlapped loop: post, compute with interleaved tests, wait
 * @param compute the compute with its interleaved tests
 * @param test    the time in the interleaved tests
 * @param pure    post and wait without compute
 */
record OverlapRow(String coll, String engine, long bytes, int ranks, int iters, double overall, double compute,
                  double test, double pure) {
    /** @return OMB's overlap in percent */
    double overlap() {
        return Overlap.percent(overall, compute, test, pure);
    }
}
