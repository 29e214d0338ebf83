package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.reduce.ReducingCollectives;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Optional;

/**
 * Runs collectives as MSCCL-IR programs on the host, with the built-in algorithms of {@link ReducingCollectives} as
 * the fallback: each call picks a program with {@link MscclPrograms#select} and runs this rank's {@code <gpu>},
 * or runs the built-in when none fits. The first call of a kind (communicator, collective, layout, count, type,
 * operator, root, form) agrees with the other ranks on what runs (one small allreduce); later calls of the kind run
 * without any exchange, and a rank that then calls something else is found by the ranks it exchanges with.
 *
 * <p>Blocking calls: the caller's thread runs the rank's thread blocks in turn, each a state machine that runs its
 * next step when its dependency and its message are ready ({@link MscclConfig#threads} gives each its own thread
 * instead). Where the members of the communicator map one another's memory (one host), a message is written
 * straight into the receiver's connection slot, or into its buffer where the program allows, and published by a
 * flag stored with release semantics; elsewhere the caller's thread puts it through the Mp ({@code iput}), as NCCL's
 * proxy drives the network. Every wait is bounded by {@link MscclConfig#timeout}; a peer that is gone, failed or
 * called something else fails the call with a message naming it.
 *
 * <p>On a stream ({@code *OnStream}, SA): the calling thread prepares the run and returns; every thread block of
 * the rank has a host stream of its own (WAIT64 GEQ before a step, the copy or reduction as a host task, WRITE64 of
 * its counters and semaphore after it), and one NIC stream per rank rings the prepared puts in an order fixed by a
 * simulated run of the whole program, so the streams cannot deadlock; the caller's stream waits for all of them.
 * Every wait times out after {@link MscclConfig#timeout} with a message naming rank, thread block, step and tile.
 *
 * <p>From the KI executor ({@code *Ki}, the KI model): the calling thread prepares, the blocks of a KI executor run
 * this rank's thread blocks over a shmem KI launch (templated puts the CPU prepared, rung by the blocks), and the
 * call returns when the launch ended; see {@link MscclKiLauncher}. {@code reduce} and {@code broadcast} (blocking,
 * on streams and KI) always run built-in trees: MSCCL-IR has no root.
 *
 * <p>Opening and closing are collective over every rank of the Mp (they create and destroy the window and the KI
 * form's symmetric heap); the first call on a communicator sets up its connections with its members. Driven by one
 * thread; one collective at a time; while a run is in progress this Mp carries no other one-sided traffic to the
 * window and no collective of the host engine on the same ranks.
 */
public final class MscclRuntime implements AutoCloseable {
    private final MscclPrograms programs;
    private final MscclConfig config;
    private final Dispatcher calls;

    private MscclRuntime(Collectives coll, MscclPrograms programs, MscclConfig config) {
        this.programs = programs;
        this.config = config;
        this.calls = new Dispatcher(coll, programs, config);
    }

    /**
     * Opens the runtime; collective over every rank of the Mp.
     *
     * @param coll     the Mp's collectives
     * @param programs the programs to choose from
     * @param config   slots, thread blocks, timeout
     * @return the runtime
     */
    public static MscclRuntime open(Collectives coll, MscclPrograms programs, MscclConfig config) {
        Objects.requireNonNull(coll, "coll must not be null");
        Objects.requireNonNull(programs, "programs must not be null");
        Objects.requireNonNull(config, "config must not be null");
        return new MscclRuntime(coll, programs, config);
    }

    /** @return the programs it chooses from */
    public MscclPrograms programs() {
        return programs;
    }

    /** @return its configuration */
    public MscclConfig config() {
        return config;
    }

    /**
     * Allreduce (see {@link ReducingCollectives#allreduce}); in place when {@code recv == send}.
     *
     * @param comm    the communicator
     * @param send    count elements
     * @param sendReg its registration
     * @param recv    count elements
     * @param recvReg its registration
     * @param count   elements
     * @param type    element type
     * @param op      operator
     * @return the program that ran, or empty if the built-in algorithm did
     */
    public Optional<MscclProgram> allreduce(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                            MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                            ReduceOp op) {
        return calls.allreduce(comm, send, sendReg, recv, recvReg, count, type, op, Trigger.BLOCKING);
    }

    /**
     * Allreduce on a stream (SA): the calling thread checks the call, picks the program, turns this rank's part of
     * it into stream work and returns; {@code stream} runs it after the work queued on it before, and its later work
     * sees the result. Where no loaded program fits, the stream runs the generated all-pairs built-in (with more
     * ranks than {@link MscclConfig#maxThreadBlocks}, the call waits for {@code stream} and runs the blocking
     * built-in). See {@link MscclRuntime} for the streams and their limits.
     *
     * @param comm    the communicator
     * @param send    count elements
     * @param sendReg its registration
     * @param recv    count elements
     * @param recvReg its registration
     * @param count   elements
     * @param type    element type
     * @param op      operator
     * @param stream  a host stream (a copy or reduction is a host task)
     * @return the program that will run, or empty if a built-in algorithm runs
     * @throws IllegalArgumentException if the stream is not a host stream
     */
    public Optional<MscclProgram> allreduceOnStream(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                                    MemorySegment recv, MpRegistration recvReg, long count,
                                                    DataType type, ReduceOp op, Stream stream) {
        return calls.allreduce(comm, send, sendReg, recv, recvReg, count, type, op, Trigger.onStream(stream));
    }

    /**
     * Allreduce from the KI executor: the calling thread checks the call, picks the program (the generated built-in
     * where none fits), prepares the launch and has {@code launcher} run it; the executor's blocks run this rank's
     * thread blocks and ring the prepared puts, and the call returns when the run ended. See {@link MscclKiLauncher}.
     *
     * @param comm      the communicator
     * @param send      count elements
     * @param sendReg   its registration
     * @param recv      count elements
     * @param recvReg   its registration
     * @param count     elements
     * @param type      element type
     * @param op        operator
     * @param launcher  runs and joins the prepared launches
     * @return the program that ran, or empty if a built-in algorithm did
     * @throws dev.gdasync.libmp.coll.CollectiveException if a launch failed (the message names the rank, thread
     *                                                    block, step and tile of a wait that timed out)
     */
    public Optional<MscclProgram> allreduceKi(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                              MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                              ReduceOp op, MscclKiLauncher launcher) {
        return calls.allreduce(comm, send, sendReg, recv, recvReg, count, type, op, Trigger.onKi(launcher));
    }

    /**
     * Allgather (see {@link ReducingCollectives#allgather}); in place when {@code send} is the rank's block of
     * {@code recv}.
     *
     * @param comm      the communicator
     * @param send      sendCount elements
     * @param sendReg   its registration
     * @param recv      size · sendCount elements
     * @param recvReg   its registration
     * @param sendCount elements per rank
     * @param type      element type
     * @return the program that ran, or empty if the built-in algorithm did
     */
    public Optional<MscclProgram> allgather(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                            MemorySegment recv, MpRegistration recvReg, long sendCount,
                                            DataType type) {
        return calls.allgather(comm, send, sendReg, recv, recvReg, sendCount, type, Trigger.BLOCKING);
    }

    /**
     * Allgather on a stream (SA), as {@link #allreduceOnStream}.
     *
     * @param comm      the communicator
     * @param send      sendCount elements
     * @param sendReg   its registration
     * @param recv      size · sendCount elements
     * @param recvReg   its registration
     * @param sendCount elements per rank
     * @param type      element type
     * @param stream    a host stream (a copy or reduction is a host task)
     * @return the program that will run, or empty if a built-in algorithm runs
     * @throws IllegalArgumentException if the stream is not a host stream
     */
    public Optional<MscclProgram> allgatherOnStream(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                                    MemorySegment recv, MpRegistration recvReg, long sendCount,
                                                    DataType type, Stream stream) {
        return calls.allgather(comm, send, sendReg, recv, recvReg, sendCount, type, Trigger.onStream(stream));
    }

    /**
     * Allgather from the KI executor: the calling thread checks the call, picks the program (the generated built-in
     * where none fits), prepares the launch and has {@code launcher} run it; the executor's blocks run this rank's
     * thread blocks and ring the prepared puts, and the call returns when the run ended. See {@link MscclKiLauncher}.
     *
     * @param comm      the communicator
     * @param send      sendCount elements
     * @param sendReg   its registration
     * @param recv      size · sendCount elements
     * @param recvReg   its registration
     * @param sendCount elements per rank
     * @param type      element type
     * @param launcher  runs and joins the prepared launches
     * @return the program that ran, or empty if a built-in algorithm did
     * @throws dev.gdasync.libmp.coll.CollectiveException if a launch failed (the message names the rank, thread
     *                                                    block, step and tile of a wait that timed out)
     */
    public Optional<MscclProgram> allgatherKi(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                              MemorySegment recv, MpRegistration recvReg, long sendCount,
                                              DataType type, MscclKiLauncher launcher) {
        return calls.allgather(comm, send, sendReg, recv, recvReg, sendCount, type, Trigger.onKi(launcher));
    }

    /**
     * All-to-all (see {@link ReducingCollectives#alltoall}); in place (an in-place program only) when
     * {@code recv == send}.
     *
     * @param comm    the communicator
     * @param send    size · count elements
     * @param sendReg its registration
     * @param recv    size · count elements
     * @param recvReg its registration
     * @param count   elements per pair of ranks
     * @param type    element type
     * @return the program that ran, or empty if the built-in algorithm did
     */
    public Optional<MscclProgram> alltoall(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                           MemorySegment recv, MpRegistration recvReg, long count, DataType type) {
        return calls.alltoall(comm, send, sendReg, recv, recvReg, count, type, Trigger.BLOCKING);
    }

    /**
     * All-to-all on a stream (SA), as {@link #allreduceOnStream}.
     *
     * @param comm    the communicator
     * @param send    size · count elements
     * @param sendReg its registration
     * @param recv    size · count elements
     * @param recvReg its registration
     * @param count   elements per pair of ranks
     * @param type    element type
     * @param stream  a host stream (a copy or reduction is a host task)
     * @return the program that will run, or empty if a built-in algorithm runs
     * @throws IllegalArgumentException if the stream is not a host stream
     */
    public Optional<MscclProgram> alltoallOnStream(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                                   MemorySegment recv, MpRegistration recvReg, long count,
                                                   DataType type, Stream stream) {
        return calls.alltoall(comm, send, sendReg, recv, recvReg, count, type, Trigger.onStream(stream));
    }

    /**
     * All-to-all from the KI executor: the calling thread checks the call, picks the program (the generated built-in
     * where none fits), prepares the launch and has {@code launcher} run it; the executor's blocks run this rank's
     * thread blocks and ring the prepared puts, and the call returns when the run ended. See {@link MscclKiLauncher}.
     *
     * @param comm      the communicator
     * @param send      size · count elements
     * @param sendReg   its registration
     * @param recv      size · count elements
     * @param recvReg   its registration
     * @param count     elements per pair of ranks
     * @param type      element type
     * @param launcher  runs and joins the prepared launches
     * @return the program that ran, or empty if a built-in algorithm did
     * @throws dev.gdasync.libmp.coll.CollectiveException if a launch failed (the message names the rank, thread
     *                                                    block, step and tile of a wait that timed out)
     */
    public Optional<MscclProgram> alltoallKi(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                             MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                             MscclKiLauncher launcher) {
        return calls.alltoall(comm, send, sendReg, recv, recvReg, count, type, Trigger.onKi(launcher));
    }

    /**
     * Reduce-scatter (see {@link ReducingCollectives#reduceScatter}); in place when {@code recv} is the rank's
     * block of {@code send}.
     *
     * @param comm      the communicator
     * @param send      size · recvCount elements
     * @param sendReg   its registration
     * @param recv      recvCount elements
     * @param recvReg   its registration
     * @param recvCount elements per rank
     * @param type      element type
     * @param op        operator
     * @return the program that ran, or empty if the built-in algorithm did
     */
    public Optional<MscclProgram> reduceScatter(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                                MemorySegment recv, MpRegistration recvReg, long recvCount,
                                                DataType type, ReduceOp op) {
        return calls.reduceScatter(comm, send, sendReg, recv, recvReg, recvCount, type, op, Trigger.BLOCKING);
    }

    /**
     * Reduce-scatter on a stream (SA), as {@link #allreduceOnStream}.
     *
     * @param comm      the communicator
     * @param send      size · recvCount elements
     * @param sendReg   its registration
     * @param recv      recvCount elements
     * @param recvReg   its registration
     * @param recvCount elements per rank
     * @param type      element type
     * @param op        operator
     * @param stream    a host stream (a copy or reduction is a host task)
     * @return the program that will run, or empty if a built-in algorithm runs
     * @throws IllegalArgumentException if the stream is not a host stream
     */
    public Optional<MscclProgram> reduceScatterOnStream(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                                        MemorySegment recv, MpRegistration recvReg, long recvCount,
                                                        DataType type, ReduceOp op, Stream stream) {
        return calls.reduceScatter(comm, send, sendReg, recv, recvReg, recvCount, type, op,
                Trigger.onStream(stream));
    }

    /**
     * Reduce-scatter from the KI executor: the calling thread checks the call, picks the program (the generated
     * built-in where none fits), prepares the launch and has {@code launcher} run it; the executor's blocks run this
     * rank's thread blocks and ring the prepared puts, and the call returns when the run ended. See {@link
     * MscclKiLauncher}.
     *
     * @param comm      the communicator
     * @param send      size · recvCount elements
     * @param sendReg   its registration
     * @param recv      recvCount elements
     * @param recvReg   its registration
     * @param recvCount elements per rank
     * @param type      element type
     * @param op        operator
     * @param launcher  runs and joins the prepared launches
     * @return the program that ran, or empty if a built-in algorithm did
     * @throws dev.gdasync.libmp.coll.CollectiveException if a launch failed (the message names the rank, thread
     *                                                    block, step and tile of a wait that timed out)
     */
    public Optional<MscclProgram> reduceScatterKi(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                                  MemorySegment recv, MpRegistration recvReg, long recvCount,
                                                  DataType type, ReduceOp op, MscclKiLauncher launcher) {
        return calls.reduceScatter(comm, send, sendReg, recv, recvReg, recvCount, type, op,
                Trigger.onKi(launcher));
    }

    /**
     * Reduce (see {@link ReducingCollectives#reduce}): rank {@code root}'s {@code recv} gets the reduction; in place on
     * the root when {@code recv == send}; the other ranks' {@code recv} is not written (it may be null there). Always
     * a built-in: the binomial tree of {@link ReducingCollectives#reduce}, whose result has the same bits whichever
     * rank is the root and in every form (blocking, stream, KI).
     *
     * @param comm    the communicator
     * @param send    count elements
     * @param sendReg its registration
     * @param recv    on the root, count elements
     * @param recvReg its registration
     * @param count   elements
     * @param type    element type
     * @param op      operator
     * @param root    the rank that gets the result
     * @return empty: the built-in ran
     */
    public Optional<MscclProgram> reduce(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                         MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                         ReduceOp op, int root) {
        return calls.reduce(comm, send, sendReg, recv, recvReg, count, type, op, root, Trigger.BLOCKING);
    }

    /**
     * Reduce on a stream (SA), as {@link #allreduceOnStream}: the stream runs the tree as a generated program.
     *
     * @param comm    the communicator
     * @param send    count elements
     * @param sendReg its registration
     * @param recv    on the root, count elements
     * @param recvReg its registration
     * @param count   elements
     * @param type    element type
     * @param op      operator
     * @param root    the rank that gets the result
     * @param stream  a host stream (a copy or reduction is a host task)
     * @return empty: a built-in runs
     * @throws IllegalArgumentException if the stream is not a host stream
     */
    public Optional<MscclProgram> reduceOnStream(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                                 MemorySegment recv, MpRegistration recvReg, long count,
                                                 DataType type, ReduceOp op, int root, Stream stream) {
        return calls.reduce(comm, send, sendReg, recv, recvReg, count, type, op, root, Trigger.onStream(stream));
    }

    /**
     * Reduce from the KI executor, as {@link #allreduceKi}: the KI blocks run the tree as a generated program.
     *
     * @param comm     the communicator
     * @param send     count elements
     * @param sendReg  its registration
     * @param recv     on the root, count elements
     * @param recvReg  its registration
     * @param count    elements
     * @param type     element type
     * @param op       operator
     * @param root     the rank that gets the result
     * @param launcher runs and joins the prepared launches
     * @return empty: a built-in ran
     */
    public Optional<MscclProgram> reduceKi(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                           MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                           ReduceOp op, int root, MscclKiLauncher launcher) {
        return calls.reduce(comm, send, sendReg, recv, recvReg, count, type, op, root, Trigger.onKi(launcher));
    }

    /**
     * Broadcast (see {@link ReducingCollectives#broadcast}): rank {@code root}'s {@code buf} lands in every rank's
     * {@code buf}. Always a built-in (the engine's binomial tree blocking, a generated binomial-tree program on
     * streams and KI).
     *
     * @param comm  the communicator
     * @param buf   count elements
     * @param reg   its registration
     * @param count elements
     * @param type  element type
     * @param root  the sending rank
     * @return empty: the built-in ran
     */
    public Optional<MscclProgram> broadcast(Communicator comm, MemorySegment buf, MpRegistration reg, long count,
                                            DataType type, int root) {
        return calls.broadcast(comm, buf, reg, count, type, root, Trigger.BLOCKING);
    }

    /**
     * Broadcast on a stream (SA), as {@link #allreduceOnStream}.
     *
     * @param comm   the communicator
     * @param buf    count elements
     * @param reg    its registration
     * @param count  elements
     * @param type   element type
     * @param root   the sending rank
     * @param stream a host stream
     * @return empty: a built-in runs
     * @throws IllegalArgumentException if the stream is not a host stream
     */
    public Optional<MscclProgram> broadcastOnStream(Communicator comm, MemorySegment buf, MpRegistration reg,
                                                    long count, DataType type, int root, Stream stream) {
        return calls.broadcast(comm, buf, reg, count, type, root, Trigger.onStream(stream));
    }

    /**
     * Broadcast from the KI executor, as {@link #allreduceKi}.
     *
     * @param comm     the communicator
     * @param buf      count elements
     * @param reg      its registration
     * @param count    elements
     * @param type     element type
     * @param root     the sending rank
     * @param launcher runs and joins the prepared launches
     * @return empty: a built-in ran
     */
    public Optional<MscclProgram> broadcastKi(Communicator comm, MemorySegment buf, MpRegistration reg, long count,
                                              DataType type, int root, MscclKiLauncher launcher) {
        return calls.broadcast(comm, buf, reg, count, type, root, Trigger.onKi(launcher));
    }

    /** @return the last blocking run of a program, or null (for this package's tests: which path it took) */
    HostRun lastHostRun() {
        return calls.lastHostRun();
    }

    /** Destroys the window and the connections; collective over every rank of the Mp. */
    @Override
    public void close() {
        calls.close();
    }
}
