package dev.gdasync.libmp.bootstrap;

import java.util.List;

/**
 * How the ranks of a job find each other: out-of-band collectives that {@code Mp.init}, window
 * creation and barriers use, never the data path (LibMP used MPI for this).
 *
 * <p>Every rank calls the collectives in the same order. A collective fails with a
 * {@link BootstrapException} naming the rank and what was awaited when a rank dies, a connection
 * breaks, or the configured timeout passes; it never hangs.
 */
public interface Bootstrap extends AutoCloseable {

    /** @return this rank, in [0, size) */
    int rank();

    /** @return the number of ranks */
    int size();

    /**
     * @return an id shared by every rank of this job and unique among jobs on the node, of the form
     * {@code [A-Za-z0-9_.-]{1,64}} (it names the job's shared-memory directory)
     */
    String jobId();

    /**
     * Gathers one byte array from every rank, at every rank.
     *
     * @param mine this rank's contribution (may be empty)
     * @return every rank's contribution, indexed by rank
     * @throws BootstrapException if a rank is gone or the timeout passes
     */
    List<byte[]> allGather(byte[] mine);

    /**
     * Returns once every rank has called it.
     *
     * @throws BootstrapException if a rank is gone or the timeout passes
     */
    default void barrier() {
        allGather(new byte[0]);
    }

    /** Leaves the job; collectives fail afterwards. Closing twice does nothing. */
    @Override
    void close();
}
