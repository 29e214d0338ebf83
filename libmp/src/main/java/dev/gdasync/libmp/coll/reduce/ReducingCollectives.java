package dev.gdasync.libmp.coll.reduce;

import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Communicator;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The built-in reducing collectives of one communicator (NCCL's and MPI's allreduce, reduce-scatter, reduce,
 * allgather, broadcast, alltoall), blocking, on registered host buffers with element counts: the communicator's
 * typed collectives ({@link Communicator#allreduce} and its siblings) under the name the MSCCL runtime and earlier
 * programs use.
 *
 * <p>Algorithms: when every member can map every other's memory (one host, the software NIC over shared memory) the
 * communicator's shared-memory path (small vectors folded from every member's copy in one synchronisation, large
 * ones reduced block by block straight from the members' buffers); otherwise messages: up to {@link #SMALL_BYTES}
 * (or with fewer elements than ranks) recursive doubling, above it a ring. Every element is reduced along one fixed
 * path, with the lower rank's operand first, so floating-point results are bit-identical on every rank.
 *
 * <p>In place follows NCCL: allreduce and reduce with {@code recv == send}; reduce-scatter with {@code recv} the
 * rank's block of {@code send} ({@code send + rank · recvCount} elements); allgather with {@code send} the rank's
 * block of {@code recv}. Any other overlap is refused. Every check happens before anything is written.
 *
 * <p>Driven by the communicator's thread; one collective at a time. {@link #close} ends this view (the scratch
 * memory belongs to the communicator's collectives and is freed with them).
 */
public final class ReducingCollectives implements AutoCloseable {
    /** Messages up to this many bytes use recursive doubling on the message path, larger ones the ring. */
    public static final long SMALL_BYTES = 64 * 1024;

    private final Communicator comm;
    private boolean closed;

    private ReducingCollectives(Communicator comm) {
        this.comm = comm;
    }

    /**
     * @param comm the communicator to run on
     * @return its reducing collectives
     */
    public static ReducingCollectives of(Communicator comm) {
        Objects.requireNonNull(comm, "comm must not be null");
        return new ReducingCollectives(comm);
    }

    /** @return the communicator */
    public Communicator communicator() {
        return comm;
    }

    /**
     * Every rank's {@code recv} gets the element-wise reduction of all ranks' {@code send} (see
     * {@link Communicator#allreduce}).
     *
     * @param send    count elements (or {@code recv} itself: in place)
     * @param sendReg a registration containing {@code send}
     * @param recv    count elements or more
     * @param recvReg a registration containing {@code recv}
     * @param count   elements, &gt;= 0
     * @param type    the element type
     * @param op      the operator
     */
    public void allreduce(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                          long count, DataType type, ReduceOp op) {
        requireOpen();
        comm.allreduce(send, sendReg, recv, recvReg, count, type, op);
    }

    /**
     * Rank {@code root}'s {@code recv} gets the element-wise reduction of all ranks' {@code send}; the other ranks'
     * {@code recv} is not written (see {@link Communicator#reduce}: the same bits whichever the root).
     *
     * @param send    count elements (or, on the root, {@code recv} itself: in place)
     * @param sendReg a registration containing {@code send}
     * @param recv    on the root, count elements or more
     * @param recvReg a registration containing {@code recv}
     * @param count   elements, &gt;= 0
     * @param type    the element type
     * @param op      the operator
     * @param root    the rank that gets the result
     */
    public void reduce(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                       long count, DataType type, ReduceOp op, int root) {
        requireOpen();
        comm.reduce(send, sendReg, recv, recvReg, count, type, op, root);
    }

    /**
     * Rank r's {@code recv} gets block r (recvCount elements) of the element-wise reduction of all ranks'
     * {@code send} (size · recvCount elements; see {@link Communicator#reduceScatter}).
     *
     * @param send      size · recvCount elements
     * @param sendReg   a registration containing {@code send}
     * @param recv      recvCount elements or more; in place: the slice of {@code send} at rank · recvCount
     * @param recvReg   a registration containing {@code recv}
     * @param recvCount elements per rank, &gt;= 0
     * @param type      the element type
     * @param op        the operator
     */
    public void reduceScatter(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                              long recvCount, DataType type, ReduceOp op) {
        requireOpen();
        comm.reduceScatter(send, sendReg, recv, recvReg, recvCount, type, op);
    }

    /**
     * Rank r's {@code send} (sendCount elements) lands in block r of every rank's {@code recv}.
     *
     * @param send      sendCount elements; in place: the slice of {@code recv} at rank · sendCount
     * @param sendReg   a registration containing {@code send}
     * @param recv      size · sendCount elements or more
     * @param recvReg   a registration containing {@code recv}
     * @param sendCount elements per rank, &gt;= 0
     * @param type      the element type
     */
    public void allgather(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                          long sendCount, DataType type) {
        requireOpen();
        comm.allgather(send, sendReg, recv, recvReg, sendCount, type);
    }

    /**
     * Rank {@code root}'s {@code buf} (count elements) lands in every rank's {@code buf}.
     *
     * @param buf   count elements or more
     * @param reg   a registration containing {@code buf}
     * @param count elements, &gt;= 0
     * @param type  the element type
     * @param root  the sending rank
     */
    public void broadcast(MemorySegment buf, MpRegistration reg, long count, DataType type, int root) {
        requireOpen();
        comm.broadcast(buf, reg, count, type, root);
    }

    /**
     * Block j (count elements) of {@code send} goes to rank j; block i of {@code recv} comes from rank i.
     *
     * @param send    size · count elements
     * @param sendReg a registration containing {@code send}
     * @param recv    size · count elements; must not overlap {@code send}
     * @param recvReg a registration containing {@code recv}
     * @param count   elements per pair of ranks, &gt;= 0
     * @param type    the element type
     */
    public void alltoall(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                         long count, DataType type) {
        requireOpen();
        comm.alltoall(send, sendReg, recv, recvReg, count, type);
    }

    /** Ends this view; later calls are refused. */
    @Override
    public void close() {
        closed = true;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("these reducing collectives of " + comm + " are closed");
        }
    }
}
