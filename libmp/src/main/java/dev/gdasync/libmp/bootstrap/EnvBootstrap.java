package dev.gdasync.libmp.bootstrap;

import dev.gdasync.libmp.bootstrap.Frames.Collective;

import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A bootstrap for ranks started by {@code scripts/mprun}, Slurm's {@code srun} or Open MPI's
 * {@code mpirun}: rank and size come from the environment ({@link JobEnvironment}), and the ranks meet
 * at a TCP rendezvous on rank 0, guarded by the job's secret.
 *
 * <p>Rank 0 listens at {@code GDASYNC_RENDEZVOUS}; the other ranks connect, retrying until the timeout.
 * Both sides of every connection prove the secret by HMAC-SHA256 challenge-response ({@code Handshake});
 * a connection that cannot is closed and rank 0 goes on waiting for the real rank. A duplicate rank, or
 * ranks disagreeing on the size or the job id, fail the job. Collectives go through rank 0: each rank
 * sends its contribution, rank 0 sends everyone the result. A dead rank (its connection closed or reset)
 * is noticed by rank 0 at once, which aborts the collective at every rank with a message naming it;
 * every collective also fails after the timeout ({@code GDASYNC_BOOTSTRAP_TIMEOUT_MS}, default 60 s).
 * After a failure the bootstrap stays failed.
 *
 * <p>Collectives are called by one thread at a time, in the same order on every rank.
 */
public final class EnvBootstrap implements Bootstrap {
    private final JobEnvironment env;
    private final Hub hub;
    private long nextSeq;

    private EnvBootstrap(JobEnvironment env, Hub hub) {
        this.env = env;
        this.hub = hub;
    }

    /**
     * Reads this process's environment and joins the job.
     *
     * @return the bootstrap, once every rank joined (rank 0) or rank 0 admitted this rank
     * @throws BootstrapException if the environment is incomplete or malformed, or joining failed
     */
    public static EnvBootstrap fromEnvironment() {
        return connect(JobEnvironment.fromEnvironment());
    }

    /**
     * Joins the job described by {@code env}.
     *
     * @param env rank, size, rendezvous, secret, job id and timeout
     * @return the bootstrap, once every rank joined (rank 0) or rank 0 admitted this rank
     * @throws BootstrapException if joining failed
     */
    public static EnvBootstrap connect(JobEnvironment env) {
        Hub hub;
        if (env.size() == 1) {
            hub = new Solo();
        } else if (env.rank() == 0) {
            hub = RootHub.open(env);
        } else {
            hub = MemberLink.join(env);
        }
        return new EnvBootstrap(env, hub);
    }

    /** @return what this bootstrap was made from */
    public JobEnvironment environment() {
        return env;
    }

    @Override
    public int rank() {
        return env.rank();
    }

    @Override
    public int size() {
        return env.size();
    }

    @Override
    public String jobId() {
        return env.jobId();
    }

    @Override
    public synchronized List<byte[]> allGather(byte[] mine) {
        if (mine.length > Frames.MAX_PART) {
            throw new IllegalArgumentException("a contribution of " + mine.length + " bytes; the bootstrap carries at most "
                    + Frames.MAX_PART + " per rank");
        }
        return hub.collective(nextSeq++, Collective.ALL_GATHER, mine.clone());
    }

    @Override
    public synchronized void barrier() {
        hub.collective(nextSeq++, Collective.BARRIER, new byte[0]);
    }

    @Override
    public String failure() {
        return hub.failure();
    }

    /**
     * Runs {@code listener} once when the job fails: a rank's connection ends without a goodbye (its process is
     * gone), a rank aborts, rank 0 is gone, or a collective fails. Rank 0 notices a member's end at once and
     * tells every rank, so every rank hears of a killed process within a round trip of the loopback or the
     * network, whether or not it is in a collective.
     */
    @Override
    public void onFailure(Consumer<String> listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        hub.onFailure(listener);
    }

    @Override
    public void abort(String reason) {
        Objects.requireNonNull(reason, "reason must not be null");
        hub.abort(reason);
    }

    /** Leaves the job with a goodbye, so that the other ranks do not take this rank's end for a failure. */
    @Override
    public void close() {
        hub.close();
    }

    @Override
    public String toString() {
        return "EnvBootstrap{" + env + "}";
    }

    /** A job of one rank. */
    private static final class Solo implements Hub {
        private final JobFailure failure = new JobFailure();
        private volatile boolean closed;

        @Override
        public String failure() {
            return failure.reason();
        }

        @Override
        public void onFailure(Consumer<String> listener) {
            failure.listen(listener);
        }

        @Override
        public void abort(String reason) {
            failure.fail(reason);
        }

        @Override
        public List<byte[]> collective(long seq, Collective c, byte[] mine) {
            if (closed) {
                throw new BootstrapException("rank 0 of a job of one rank: " + c + " #" + seq + " on a closed bootstrap");
            }
            String failed = failure.reason();
            if (failed != null) {
                throw new BootstrapException("rank 0 of a job of one rank: " + c + " #" + seq + " failed: " + failed);
            }
            return new java.util.ArrayList<>(List.of(mine));
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
