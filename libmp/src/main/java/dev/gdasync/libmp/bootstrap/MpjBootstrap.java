package dev.gdasync.libmp.bootstrap;

import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A bootstrap over MPJ Express's {@code MPI.COMM_WORLD}, for applications started by MPJ's
 * {@code mpjrun} (or its {@code starter.jar}). The application owns MPI: it calls {@code MPI.Init}
 * before {@link #fromWorld()} and {@code MPI.Finalize} after {@link #close()}, which does not finalize.
 *
 * <p>allGather is an {@code Allgather} of the lengths followed by an {@code Allgatherv} of the bytes;
 * barrier is {@code Barrier}; the job id is drawn at random by rank 0 and broadcast. MPJ's collectives
 * have no timeout, so a rank that dies mid-collective is handled by MPJ Express (with its multicore
 * device the ranks are threads of one JVM, which dies as a whole).
 *
 * <p>MPJ Express is a provided dependency: it is on the class path only when the application runs
 * under MPJ Express ({@code $MPJ_HOME/lib}).
 */
public final class MpjBootstrap implements Bootstrap {
    private static final int JOB_ID_BYTES = 32;

    private final Intracomm comm;
    private final int rank;
    private final int size;
    private final String jobId;
    private volatile boolean closed;
    private final JobFailure failure = new JobFailure();

    private MpjBootstrap(Intracomm comm, int rank, int size, String jobId) {
        this.comm = comm;
        this.rank = rank;
        this.size = size;
        this.jobId = jobId;
    }

    /**
     * A bootstrap over {@code MPI.COMM_WORLD}; collective (every rank calls it), since rank 0
     * broadcasts the job id.
     *
     * @return the bootstrap
     * @throws BootstrapException if MPI was not initialized or a call failed
     */
    public static MpjBootstrap fromWorld() {
        try {
            if (!MPI.Initialized()) {
                throw new BootstrapException("MpjBootstrap needs MPI: call MPI.Init(args) first");
            }
            Intracomm world = MPI.COMM_WORLD;
            int rank = world.Rank();
            int size = world.Size();
            byte[] id = new byte[JOB_ID_BYTES];
            if (rank == 0) {
                byte[] drawn = JobIds.random("mpj").getBytes(StandardCharsets.US_ASCII);
                System.arraycopy(drawn, 0, id, 0, drawn.length);
            }
            world.Bcast(id, 0, id.length, MPI.BYTE, 0);
            int len = 0;
            while (len < id.length && id[len] != 0) {
                len++;
            }
            String jobId = JobIds.require(new String(id, 0, len, StandardCharsets.US_ASCII), "the job id broadcast by rank 0");
            return new MpjBootstrap(world, rank, size, jobId);
        } catch (MPIException e) {
            throw new BootstrapException("MPJ Express failed while setting up the bootstrap: " + e, e);
        }
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public String jobId() {
        return jobId;
    }

    @Override
    public List<byte[]> allGather(byte[] mine) {
        check("allGather");
        try {
            int[] one = {mine.length};
            int[] lengths = new int[size];
            comm.Allgather(one, 0, 1, MPI.INT, lengths, 0, 1, MPI.INT);
            int[] displs = new int[size];
            long total = 0;
            for (int r = 0; r < size; r++) {
                displs[r] = (int) total;
                total += lengths[r];
            }
            if (total > Integer.MAX_VALUE - 8) {
                throw new BootstrapException("rank " + rank + " of job " + jobId + ": allGather of " + total
                        + " bytes in all; MPJ Express carries less than 2 GiB");
            }
            byte[] all = new byte[(int) total];
            comm.Allgatherv(mine, 0, mine.length, MPI.BYTE, all, 0, lengths, displs, MPI.BYTE);
            List<byte[]> parts = new ArrayList<>(size);
            for (int r = 0; r < size; r++) {
                parts.add(Arrays.copyOfRange(all, displs[r], displs[r] + lengths[r]));
            }
            return parts;
        } catch (MPIException e) {
            throw new BootstrapException("rank " + rank + " of job " + jobId + ": allGather failed in MPJ Express: " + e, e);
        }
    }

    @Override
    public void barrier() {
        check("barrier");
        try {
            comm.Barrier();
        } catch (MPIException e) {
            throw new BootstrapException("rank " + rank + " of job " + jobId + ": barrier failed in MPJ Express: " + e, e);
        }
    }

    private void check(String what) {
        if (closed) {
            throw new BootstrapException("rank " + rank + " of job " + jobId + ": " + what + " on a closed bootstrap");
        }
    }

    @Override
    public String failure() {
        return failure.reason();
    }

    /** MPJ Express reports no failure between collectives: the listener runs only after {@link #abort}. */
    @Override
    public void onFailure(Consumer<String> listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        failure.listen(listener);
    }

    /**
     * Fails the job here and asks MPJ Express to abort it ({@code MPI_Abort}), which ends the other ranks'
     * processes as MPI does.
     */
    @Override
    public void abort(String reason) {
        Objects.requireNonNull(reason, "reason must not be null");
        if (failure.fail(reason)) {
            try {
                comm.Abort(1);
            } catch (RuntimeException e) { // MPJ's MPIException is unchecked
                System.getLogger(MpjBootstrap.class.getName()).log(System.Logger.Level.WARNING,
                        "MPJ Express could not abort job " + jobId + ": " + e);
            }
        }
    }

    /** Leaves the job without finalizing MPI, which the application owns. */
    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "MpjBootstrap{rank " + rank + " of " + size + ", job " + jobId + "}";
    }
}
