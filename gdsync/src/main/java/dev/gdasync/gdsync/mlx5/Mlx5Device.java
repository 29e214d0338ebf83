package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.memop.Doorbell;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.TrafficCounters;

/**
 * What the mlx5 provider needs from an mlx5 device: memory it can reach, keys, and queues in the mlx5 formats.
 * A ConnectX NIC through rdma-core's verbs and mlx5 direct verbs is one; the software mlx5 device, which lays
 * the same queues out in shared memory and executes them over the software NIC's transports, is the other. The
 * provider ({@code Mlx5Nic}) writes WQEs, rings and reads CQEs the same way on both: only where the queues live
 * differs.
 *
 * <p>Calls are made by the provider under its own locks: a device need not be thread-safe, except that
 * {@link #progressStoreRings()} and the doorbells may be called from any thread.
 */
public interface Mlx5Device extends AutoCloseable {

    /** @return the device's name, for messages ({@code mlx5_0}, {@code swmlx5-<job>-<rank>}) */
    String name();

    /**
     * Allocates host memory the device can read and write, for buffers and queues.
     *
     * @param bytes the size
     * @return the region
     */
    Region allocateHost(long bytes);

    /**
     * Allocates GPU memory the device can read and write.
     *
     * @param gpu   the GPU's ordinal
     * @param bytes the size
     * @return the region
     * @throws UnsupportedOperationException if the device cannot reach GPU memory
     */
    default Region allocateDevice(int gpu, long bytes) {
        throw new UnsupportedOperationException(name() + " cannot use GPU memory");
    }

    /**
     * Registers a range of a region.
     *
     * @param region the region (from {@link #allocateHost} or {@link #allocateDevice})
     * @param offset the range's offset in it
     * @param length its length, at least 1
     * @param access {@link dev.gdasync.gdsync.nic.Access} flags (the same bits as verbs' access flags)
     * @return its keys
     */
    Mlx5Keys register(Region region, long offset, long length, int access);

    /**
     * Ends a registration: both keys stop working.
     *
     * @param keys what {@link #register} returned
     */
    void deregister(Mlx5Keys keys);

    /**
     * Creates a completion queue with at least {@code entries} 64-byte CQEs, every CQE initialised to an invalid
     * opcode with the owner bit set ({@link Mlx5Cqe#initialise}), so that the first pass's waits can test the
     * owner bit alone.
     *
     * @param entries the CQEs it must hold
     * @return where it lives
     */
    Mlx5CqQueues createCq(int entries);

    /**
     * Destroys a completion queue; its queue pairs are destroyed first.
     *
     * @param cq the queue
     */
    void destroyCq(Mlx5CqQueues cq);

    /**
     * Creates an RC queue pair in the reset state.
     *
     * @param sendCq where its send completions go
     * @param recvCq where its receive completions go
     * @param shape  what it must hold
     * @return where it lives
     */
    Mlx5QpQueues createQp(Mlx5CqQueues sendCq, Mlx5CqQueues recvCq, Mlx5QpShape shape);

    /**
     * @param qp a queue pair
     * @return what a peer needs to connect to it (number, address, first packet sequence number)
     */
    Endpoint endpoint(Mlx5QpQueues qp);

    /**
     * Connects a queue pair to a peer's and makes it ready to send (INIT, RTR, RTS on hardware).
     *
     * @param qp     the queue pair
     * @param remote the peer's {@link #endpoint}
     * @throws IllegalArgumentException if the endpoint is not this kind of device's
     */
    void connect(Mlx5QpQueues qp, Endpoint remote);

    /**
     * Moves a queue pair to the error state: its posted receives and every send not yet executed complete with
     * flush errors.
     *
     * @param qp the queue pair
     */
    void toError(Mlx5QpQueues qp);

    /**
     * Destroys a queue pair.
     *
     * @param qp the queue pair
     */
    void destroyQp(Mlx5QpQueues qp);

    /**
     * What a host executor calls after it wrote a queue pair's BlueFlame register: the software device runs the
     * rung work there; hardware needs nothing (null).
     *
     * @param qp the queue pair
     * @return the doorbell call, or null
     */
    Doorbell doorbell(Mlx5QpQueues qp);

    /**
     * Says that a queue pair's send counter will move by a plain store (a GPU, a kernel thread): the software
     * device polls eagerly until it did. Hardware needs nothing.
     *
     * @param qp the queue pair
     */
    default void expectStoreRing(Mlx5QpQueues qp) {
    }

    /**
     * Says that an executor that cannot run {@link #cqProgress} (a GPU stream, a kernel) waits on a CQE of a completion
     * queue: the software device polls eagerly for a while, since its engine writes the CQE. Hardware needs nothing.
     *
     * @param cq the completion queue
     */
    default void expectCompletion(Mlx5CqQueues cq) {
    }

    /**
     * What the device counts for a queue pair that the CPU cannot see in its completions: doorbells noticed (inline or
     * by an agent) and RNR retries. Only {@link TrafficCounters#doorbellsInline()}, {@link TrafficCounters#doorbellsAgent()}
     * and {@link TrafficCounters#rnrRetries()} are read.
     *
     * @param qp the queue pair's queues
     * @return the counts; by default none (a ConnectX NIC keeps them to itself)
     */
    default TrafficCounters counters(Mlx5QpQueues qp) {
        return TrafficCounters.NONE;
    }

    /**
     * Runs work rung by plain stores on the calling thread (a host thread that played a kernel).
     *
     * @return how many queue pairs had work run
     */
    default int progressStoreRings() {
        return 0;
    }

    /**
     * @return what a host thread waiting on a word a peer writes through this device runs between looks, or null
     */
    default WaitProgress waitProgress() {
        return null;
    }

    /**
     * What a poll that finds a completion queue empty, and a host thread waiting on one of its CQEs, runs: the
     * software device writes the CQEs its transports completed there; hardware writes them itself (null).
     *
     * @param cq a completion queue
     * @return the progress call, or null
     */
    default WaitProgress cqProgress(Mlx5CqQueues cq) {
        return null;
    }

    /**
     * Says why a work request failed, from its error CQE.
     *
     * @param status         the verbs status the CQE's syndrome maps to
     * @param vendorSyndrome the CQE's vendor syndrome
     * @return the detail; by default one that the status implies
     */
    default ErrorDetail errorDetail(CompletionStatus status, int vendorSyndrome) {
        return switch (status) {
            case SUCCESS -> ErrorDetail.NONE;
            case WR_FLUSH_ERR -> ErrorDetail.FLUSHED;
            case RNR_RETRY_EXC_ERR -> ErrorDetail.RNR_TIMEOUT;
            case RETRY_EXC_ERR -> ErrorDetail.PEER_UNREACHABLE;
            case REM_ACCESS_ERR -> ErrorDetail.REMOTE_ACCESS_DENIED;
            case LOC_PROT_ERR -> ErrorDetail.BAD_LKEY;
            case LOC_LEN_ERR -> ErrorDetail.RECV_TOO_SMALL;
            default -> ErrorDetail.MALFORMED_REQUEST;
        };
    }

    /** Destroys what is left and closes the device. */
    @Override
    void close();
}
