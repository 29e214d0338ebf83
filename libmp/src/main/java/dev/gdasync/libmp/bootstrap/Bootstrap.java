package dev.gdasync.libmp.bootstrap;

import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

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

    /**
     * @return why the job failed (a rank's process gone, a rank that aborted, rank 0 gone), or null while it is
     *         healthy. A rank that leaves by {@link #close()} is not a failure.
     */
    default String failure() {
        return null;
    }

    /**
     * Registers what to run once the job fails: it runs once, with the reason, on a thread of the bootstrap (or
     * at once, on the caller's, if the job failed already), and must not block. {@code Mp} fails its outstanding
     * and later operations there. Bootstraps that cannot notice a failure between collectives never call it.
     *
     * @param listener takes the reason, which names the rank that failed and how
     * @throws NullPointerException if the listener is null
     */
    default void onFailure(Consumer<String> listener) {
        Objects.requireNonNull(listener, "listener must not be null");
    }

    /**
     * Aborts the job (MPI's {@code MPI_Abort}, NCCL's {@code ncclCommAbort}): every rank's bootstrap fails with
     * the reason and its failure listeners run, at once. Returns without waiting for the other ranks.
     *
     * @param reason why, for every rank's messages
     * @throws UnsupportedOperationException if this bootstrap cannot reach the other ranks between collectives
     */
    default void abort(String reason) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot abort a job");
    }

    /** Leaves the job; collectives fail afterwards. Closing twice does nothing. */
    @Override
    void close();
}
