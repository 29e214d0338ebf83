package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.PutFlags;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.CollBuffers;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.reduce.ReducingCollectives;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs collectives as MSCCL-IR programs on the host, with the built-in algorithms of {@link ReducingCollectives} as
 * the fallback: each call picks a program with {@link MscclPrograms#select} and runs this rank's {@code <gpu>},
 * or runs the built-in when none fits. Every call first agrees with the other ranks on what runs (one small
 * allreduce, which is also the barrier that makes the connection memory free for the run).
 *
 * <p>Transport: one connection per (peer, channel) and direction, with {@link MscclConfig#slots} slots of
 * {@link MscclConfig#slotBytes}: the receiver's slots and flags lie in a window over every rank of the Mp; the
 * sender puts a message and then its flag (one queue pair, so in order), the receiver acknowledges by putting
 * the number of messages it has consumed into the sender's acknowledgement word. Only the caller's thread drives
 * the Mp (as NCCL's proxy drives the network); thread blocks touch memory only.
 *
 * <p>On a stream ({@code *OnStream}, SA): the calling thread prepares the run and returns; every thread block of
 * the rank has a host stream of its own (WAIT64 GEQ before a step, the copy or reduction as a host task, WRITE64 of
 * its counters and semaphore after it), and one NIC stream per rank rings the prepared puts in an order fixed by a
 * simulated run of the whole program, so the streams cannot deadlock; the caller's stream waits for all of them.
 * The first call of a kind agrees with the other ranks, later identical calls do not. Every wait times out after
 * {@link MscclConfig#timeout} with a message naming rank, thread block, step and tile.
 *
 * <p>From the KI executor ({@code *Ki}, the KI model): the calling thread prepares, the blocks of a KI executor run
 * this rank's thread blocks over a shmem KI launch (templated puts the CPU prepared, rung by the blocks), and the
 * call returns when the launch ended; see {@link MscclKiLauncher}. {@code reduce} and {@code broadcast} (blocking,
 * on streams and KI) always run built-in trees: MSCCL-IR has no root.
 *
 * <p>Opening and closing are collective over every rank of the Mp (they create and destroy the window and the KI
 * form's symmetric heap). Driven by
 * one thread; one collective at a time; while a run is in progress this Mp carries no other one-sided traffic to
 * the window and no collective of the host engine on the same ranks.
 */
public final class MscclRuntime implements AutoCloseable {
    private static final int MAX_PENDING_PUTS = 48;

    private final Collectives coll;
    private final Mp mp;
    private final MscclPrograms programs;
    private final MscclConfig config;
    private final MemorySegment arena;
    private final MpWindow window;
    private final MemorySegment stage;
    private final MpRegistration stageReg;
    private final MemorySegment semaphoreMemory;
    private final Map<Integer, ReducingCollectives> builtins = new HashMap<>();
    private final BlockThreads blockThreads;
    private String broken;
    private boolean closed;
    /** The stream interpreter, made by the first stream run. */
    private StreamInterpreter streams;
    /** The KI form's connection memory (a symmetric heap), made with the runtime: opening is collective anyway. */
    private final KiInterpreter ki;
    /**
     * Calls whose choice every rank agreed on; a repeated call skips the agreement and numbers its run itself. Safe
     * because a run ends only when every message it sent was acknowledged, so no barrier is needed between runs.
     */
    private final java.util.Set<String> agreed = new java.util.HashSet<>();
    private final Arena scratchArena = Arena.ofShared();
    private MemorySegment streamScratch;
    /** The stream built-ins, generated once per collective, rank count and layout. */
    private final Map<String, MscclProgram> allPairs = new HashMap<>();

    private MscclRuntime(Collectives coll, MscclPrograms programs, MscclConfig config) {
        this.coll = coll;
        this.mp = coll.mp();
        this.programs = programs;
        this.config = config;
        long bytes = config.regionBytes() * config.maxThreadBlocks();
        this.arena = mp.allocate(bytes);
        this.window = mp.windowCreate(arena);
        this.stage = mp.allocate(bytes);
        this.stageReg = mp.register(stage);
        this.semaphoreMemory = mp.allocate(8L * config.maxThreadBlocks());
        this.blockThreads = new BlockThreads("msccl-r" + mp.rank() + "-tb");
        this.ki = new KiInterpreter(mp, config);
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

    // ---- collectives ----

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
        return allreduce(comm, send, sendReg, recv, recvReg, count, type, op, Trigger.BLOCKING);
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
        requireHostStream(stream);
        return allreduce(comm, send, sendReg, recv, recvReg, count, type, op, Trigger.onStream(stream));
    }

    /**
     * Allreduce from the KI executor: the calling thread checks the call, picks the program (the generated built-in where
     * none fits), prepares the launch and has {@code launcher} run it; the executor's blocks run this rank's thread
     * blocks and ring the prepared puts, and the call returns when the run ended. See {@link MscclKiLauncher}.
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
        return allreduce(comm, send, sendReg, recv, recvReg, count, type, op, Trigger.onKi(launcher));
    }

    private Optional<MscclProgram> allreduce(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                             MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                             ReduceOp op, Trigger how) {
        long bytes = check("allreduce", comm, send, sendReg, recv, recvReg, count, type, op, count, count);
        CollBuffers.requireSameOrDisjoint(send, recv, bytes);
        boolean inPlace = send.address() == recv.address();
        return dispatch(comm, Collective.ALLREDUCE, inPlace, bytes, count, type, op, send, inPlace ? send : recv,
                () -> builtin(comm).allreduce(send, sendReg, recv, recvReg, count, type, op), how);
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
        return allgather(comm, send, sendReg, recv, recvReg, sendCount, type, Trigger.BLOCKING);
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
        requireHostStream(stream);
        return allgather(comm, send, sendReg, recv, recvReg, sendCount, type, Trigger.onStream(stream));
    }

    /**
     * Allgather from the KI executor: the calling thread checks the call, picks the program (the generated built-in where
     * none fits), prepares the launch and has {@code launcher} run it; the executor's blocks run this rank's thread
     * blocks and ring the prepared puts, and the call returns when the run ended. See {@link MscclKiLauncher}.
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
        return allgather(comm, send, sendReg, recv, recvReg, sendCount, type, Trigger.onKi(launcher));
    }

    private Optional<MscclProgram> allgather(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                             MemorySegment recv, MpRegistration recvReg, long sendCount, DataType type,
                                             Trigger how) {
        long total = Math.multiplyExact(sendCount, (long) comm.size());
        long block = check("allgather", comm, send, sendReg, recv, recvReg, sendCount, type, ReduceOp.SUM, sendCount,
                total);
        CollBuffers.requireInPlaceAt(recv, send, block, comm.rank() * block, "recv + rank · sendCount");
        boolean inPlace = send.address() == recv.address() + comm.rank() * block && block > 0;
        return dispatch(comm, Collective.ALLGATHER, inPlace, block, total, type, ReduceOp.SUM, inPlace ? recv : send,
                recv, () -> builtin(comm).allgather(send, sendReg, recv, recvReg, sendCount, type), how);
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
        return alltoall(comm, send, sendReg, recv, recvReg, count, type, Trigger.BLOCKING);
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
        requireHostStream(stream);
        return alltoall(comm, send, sendReg, recv, recvReg, count, type, Trigger.onStream(stream));
    }

    /**
     * All-to-all from the KI executor: the calling thread checks the call, picks the program (the generated built-in where
     * none fits), prepares the launch and has {@code launcher} run it; the executor's blocks run this rank's thread
     * blocks and ring the prepared puts, and the call returns when the run ended. See {@link MscclKiLauncher}.
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
                                             MemorySegment recv, MpRegistration recvReg, long count, DataType type, MscclKiLauncher launcher) {
        return alltoall(comm, send, sendReg, recv, recvReg, count, type, Trigger.onKi(launcher));
    }

    private Optional<MscclProgram> alltoall(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                            MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                            Trigger how) {
        long total = Math.multiplyExact(count, (long) comm.size());
        check("alltoall", comm, send, sendReg, recv, recvReg, count, type, ReduceOp.SUM, total, total);
        CollBuffers.requireSameOrDisjoint(send, recv, total * type.bytes());
        boolean inPlace = send.address() == recv.address();
        return dispatch(comm, Collective.ALLTOALL, inPlace, count * type.bytes(), total, type, ReduceOp.SUM, send,
                recv, () -> builtin(comm).alltoall(send, sendReg, recv, recvReg, count, type), how);
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
        return reduceScatter(comm, send, sendReg, recv, recvReg, recvCount, type, op, Trigger.BLOCKING);
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
        requireHostStream(stream);
        return reduceScatter(comm, send, sendReg, recv, recvReg, recvCount, type, op, Trigger.onStream(stream));
    }

    /**
     * Reduce-scatter from the KI executor: the calling thread checks the call, picks the program (the generated built-in where
     * none fits), prepares the launch and has {@code launcher} run it; the executor's blocks run this rank's thread
     * blocks and ring the prepared puts, and the call returns when the run ended. See {@link MscclKiLauncher}.
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
        return reduceScatter(comm, send, sendReg, recv, recvReg, recvCount, type, op, Trigger.onKi(launcher));
    }

    private Optional<MscclProgram> reduceScatter(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                                 MemorySegment recv, MpRegistration recvReg, long recvCount,
                                                 DataType type, ReduceOp op, Trigger how) {
        long total = Math.multiplyExact(recvCount, (long) comm.size());
        long block = check("reduceScatter", comm, send, sendReg, recv, recvReg, recvCount, type, op, total,
                recvCount);
        CollBuffers.requireInPlaceAt(send, recv, block, comm.rank() * block, "send + rank · recvCount");
        boolean inPlace = recv.address() == send.address() + comm.rank() * block && block > 0;
        return dispatch(comm, Collective.REDUCE_SCATTER, inPlace, block, total, type, op, send, inPlace ? send : recv,
                () -> builtin(comm).reduceScatter(send, sendReg, recv, recvReg, recvCount, type, op), how);
    }

    // ---- rooted collectives: the built-in trees (MSCCL-IR programs carry no root) ----

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
        return reduce(comm, send, sendReg, recv, recvReg, count, type, op, root, Trigger.BLOCKING);
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
        requireHostStream(stream);
        return reduce(comm, send, sendReg, recv, recvReg, count, type, op, root, Trigger.onStream(stream));
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
        return reduce(comm, send, sendReg, recv, recvReg, count, type, op, root, Trigger.onKi(launcher));
    }

    private Optional<MscclProgram> reduce(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                          MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                          ReduceOp op, int root, Trigger how) {
        Objects.requireNonNull(comm, "comm must not be null");
        requireRoot(comm, root);
        boolean isRoot = comm.rank() == root;
        long bytes = isRoot ? check("reduce", comm, send, sendReg, recv, recvReg, count, type, op, count, count)
                : check("reduce", comm, send, sendReg, send, sendReg, count, type, op, count, count);
        if (isRoot) {
            CollBuffers.requireSameOrDisjoint(send, recv, bytes);
        }
        int n = comm.size();
        return dispatch(comm, Optional.empty(), 4 + 2L * root, "reduce to rank " + root,
                () -> allPairs.computeIfAbsent("reduce/" + n + "/" + root, k -> TreePrograms.reduce(n, root)),
                count, type, op, send, isRoot ? recv : send,
                () -> builtin(comm).reduce(send, sendReg, recv, recvReg, count, type, op, root), how);
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
        return broadcast(comm, buf, reg, count, type, root, Trigger.BLOCKING);
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
        requireHostStream(stream);
        return broadcast(comm, buf, reg, count, type, root, Trigger.onStream(stream));
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
        return broadcast(comm, buf, reg, count, type, root, Trigger.onKi(launcher));
    }

    private Optional<MscclProgram> broadcast(Communicator comm, MemorySegment buf, MpRegistration reg, long count,
                                             DataType type, int root, Trigger how) {
        Objects.requireNonNull(comm, "comm must not be null");
        requireRoot(comm, root);
        check("broadcast", comm, buf, reg, buf, reg, count, type, ReduceOp.SUM, count, count);
        int n = comm.size();
        return dispatch(comm, Optional.empty(), 5 + 2L * root, "broadcast from rank " + root,
                () -> allPairs.computeIfAbsent("broadcast/" + n + "/" + root, k -> TreePrograms.broadcast(n, root)),
                count, type, ReduceOp.SUM, buf, buf, () -> builtin(comm).broadcast(buf, reg, count, type, root), how);
    }

    private static void requireRoot(Communicator comm, int root) {
        if (root < 0 || root >= comm.size()) {
            throw new IllegalArgumentException("root " + root + " is outside " + comm + ": ranks are 0.."
                    + (comm.size() - 1));
        }
    }

    /** Destroys the window; collective over every rank of the Mp. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (streams != null) {
            streams.close();
        }
        ki.close();
        blockThreads.close();
        scratchArena.close();
        for (ReducingCollectives r : builtins.values()) {
            r.close();
        }
        if (agreeMemory != null) {
            mp.deregister(agreeReg);
            mp.free(agreeMemory);
        }
        mp.windowDestroy(window);
        mp.deregister(stageReg);
        mp.free(stage);
        mp.free(arena);
        mp.free(semaphoreMemory);
    }

    /** Runs the chosen program, or the built-in, blocking, on the stream or on the KI executor. */
    private Optional<MscclProgram> dispatch(Communicator comm, Collective c, boolean inPlace, long callBytes,
                                            long bigElems, DataType type, ReduceOp op, MemorySegment input,
                                            MemorySegment output, Runnable builtinCall, Trigger how) {
        Optional<MscclProgram> p = programs.select(c, inPlace, comm.size(), callBytes, bigElems)
                .filter(x -> x.gpus().stream().allMatch(g -> g.tbs().size() <= config.maxThreadBlocks()));
        return dispatch(comm, p, c.ordinal(), c.xml() + "/" + inPlace,
                () -> comm.size() > config.maxThreadBlocks() ? null
                        : allPairs.computeIfAbsent(c + "/" + comm.size() + "/" + inPlace,
                                k -> AllPairsPrograms.of(c, comm.size(), inPlace)),
                bigElems, type, op, input, output, builtinCall, how);
    }

    /**
     * @param kind      numbers the kind of call for the agreement (a collective, or a rooted one and its root)
     * @param kindName  names it
     * @param generated the built-in as a program for streams and KI, or null where it does not fit
     */
    private Optional<MscclProgram> dispatch(Communicator comm, Optional<MscclProgram> p, long kind, String kindName,
                                            java.util.function.Supplier<MscclProgram> generated, long bigElems,
                                            DataType type, ReduceOp op, MemorySegment input, MemorySegment output,
                                            Runnable builtinCall, Trigger how) {
        String key = p.map(x -> programs.programs().indexOf(x)).orElse(-1) + "/" + kindName + "/" + type + "/" + op
                + "/" + bigElems + "/" + comm.context() + "/" + how.name();
        boolean cached = agreed.contains(key);
        if (how.stream() == null || !cached) {
            // The CPU is about to post (the agreement, the built-in, a host or KI run): the NIC stream must be done.
            if (how.stream() != null) {
                how.stream().synchronize();
            }
            quiesceStreams();
        }
        if (cached) {
            epoch++;
        } else {
            choose(comm, p, kind, kindName, bigElems, type, op);
            agreed.add(key);
        }
        MscclProgram run = how == Trigger.BLOCKING ? null : p.orElseGet(generated);
        if (run == null) {
            if (how.stream() != null) {
                how.stream().synchronize();
            }
            if (p.isEmpty()) {
                builtinCall.run();
            } else {
                run(p.get(), comm, input, output, bigElems, type, op);
            }
            return p;
        }
        if (how.ki() != null) {
            runKi(run, comm, input, output, bigElems, type, op, how.ki());
        } else {
            enqueueRun(run, comm, input, output, bigElems, type, op, how.stream());
        }
        return p;
    }

    /** How a call is triggered: blocking (the caller's thread), on a host stream (SA) or by KI blocks. */
    private record Trigger(Stream stream, MscclKiLauncher ki) {
        static final Trigger BLOCKING = new Trigger(null, null);

        static Trigger onStream(Stream stream) {
            return new Trigger(stream, null);
        }

        static Trigger onKi(MscclKiLauncher ki) {
            Objects.requireNonNull(ki, "launcher must not be null");
            Objects.requireNonNull(ki.executor(), "the launcher's executor must not be null");
            return new Trigger(null, ki);
        }

        String name() {
            return stream != null ? "sa" : ki != null ? "ki" : "host";
        }
    }

    private void runKi(MscclProgram program, Communicator comm, MemorySegment input, MemorySegment output,
                       long bigElems, DataType type, ReduceOp op, MscclKiLauncher launcher) {
        MscclProgram.Gpu gpu = program.gpus().get(comm.rank());
        long chunkElems = bigElems / program.nchunksperloop();
        MemorySegment scratch = scratch(gpu.sChunks() * chunkElems * type.bytes());
        RunPlan plan = new RunPlan(program, comm.rank(), type, op, input, output, scratch, chunkElems,
                config.slotBytes());
        try {
            ki.run(program, comm, plan, epoch, launcher);
        } catch (CollectiveException e) {
            broken = e.getMessage();
            throw e;
        }
    }

    private static void requireHostStream(Stream stream) {
        Objects.requireNonNull(stream, "stream must not be null");
        if (!(stream instanceof HostStream)) {
            throw new IllegalArgumentException("the MSCCL stream interpreter runs its copies and reductions as host "
                    + "tasks, so it needs a host stream, got " + stream.name());
        }
        if (stream.isClosed() || stream.failure() != null) {
            throw new IllegalArgumentException("stream " + stream.name() + " is closed or failed");
        }
    }

    /** Waits for the stream runs in flight: the CPU may use the queue pairs their NIC stream rings only then. */
    private void quiesceStreams() {
        if (streams != null) {
            try {
                streams.quiesce();
            } catch (RuntimeException e) {
                broken = "a stream run failed: " + e;
                throw new IllegalStateException("an earlier run on streams failed, so the connections are out of "
                        + "step: " + e, e);
            }
        }
    }

    private void enqueueRun(MscclProgram program, Communicator comm, MemorySegment input, MemorySegment output,
                            long bigElems, DataType type, ReduceOp op, Stream stream) {
        MscclProgram.Gpu gpu = program.gpus().get(comm.rank());
        long chunkElems = bigElems / program.nchunksperloop();
        MemorySegment scratch = scratch(gpu.sChunks() * chunkElems * type.bytes());
        RunPlan plan = new RunPlan(program, comm.rank(), type, op, input, output, scratch, chunkElems,
                config.slotBytes());
        if (streams == null) {
            streams = new StreamInterpreter(mp, config, arena, window, stage, stageReg);
        }
        streams.enqueue(program, comm, plan, epoch << 32, stream);
    }

    /** Scratch for stream runs: kept until close, since a run may still use it after the call returned. */
    private MemorySegment scratch(long bytes) {
        if (bytes == 0) {
            return MemorySegment.NULL;
        }
        if (streamScratch == null || streamScratch.byteSize() < bytes) {
            streamScratch = scratchArena.allocate(bytes, 64);
        }
        return streamScratch;
    }

    // ---- selection ----

    private long check(String what, Communicator comm, MemorySegment send, MpRegistration sendReg, MemorySegment recv,
                       MpRegistration recvReg, long count, DataType type, ReduceOp op, long sendElems,
                       long recvElems) {
        Objects.requireNonNull(comm, "comm must not be null");
        if (closed) {
            throw new IllegalStateException("this MSCCL runtime is closed");
        }
        if (comm.collectives() != coll) {
            throw new IllegalArgumentException(comm + " belongs to another Collectives than this runtime");
        }
        if (broken == null && streams != null && streams.failure() != null) {
            broken = "a stream run failed: " + streams.failure();
        }
        if (broken != null) {
            throw new IllegalStateException("an earlier run failed, so the connections are out of step: " + broken);
        }
        return CollBuffers.requireCall(what, send, sendReg, recv, recvReg, count, type, op, sendElems, recvElems);
    }

    /**
     * Picks a program and makes sure every rank picked the same one: an allreduce (MAX) of this rank's choice, its
     * negation and its last run's epoch shows any difference to every rank, which then all refuse; the maximum
     * epoch + 1 numbers this run on every rank.
     */
    private void choose(Communicator comm, Optional<MscclProgram> p, long kind, String kindName, long bigElems,
                        DataType type, ReduceOp op) {
        long id = p.map(x -> (long) programs.programs().indexOf(x) + 1).orElse(0L);
        long fingerprint = ((id * 31 + kind) * 31 + type.ordinal()) * 31 + op.ordinal();
        fingerprint = fingerprint * 1_000_003L + bigElems;
        if (agreeMemory == null) {
            agreeMemory = mp.allocate(24);
            agreeReg = mp.register(agreeMemory);
        }
        agreeMemory.set(ValueLayout.JAVA_LONG, 0, fingerprint);
        agreeMemory.set(ValueLayout.JAVA_LONG, 8, -fingerprint);
        agreeMemory.set(ValueLayout.JAVA_LONG, 16, epoch);
        builtin(comm).allreduce(agreeMemory, agreeReg, agreeMemory, agreeReg, 3, DataType.INT64, ReduceOp.MAX);
        if (agreeMemory.get(ValueLayout.JAVA_LONG, 0) != -agreeMemory.get(ValueLayout.JAVA_LONG, 8)) {
            throw new IllegalStateException("rank " + comm.rank() + " of " + comm + " chose "
                    + p.map(MscclProgram::toString).orElse("the built-in " + kindName)
                    + " but other ranks chose otherwise: load the same programs and pass the same count, type and "
                    + "operator on every rank");
        }
        epoch = agreeMemory.get(ValueLayout.JAVA_LONG, 16) + 1;
    }

    /**
     * The number of the last run on this rank. Flags and acknowledgements carry it in their upper 32 bits, so
     * whatever an earlier run left in the connection memory is below every value this run waits for, and the
     * memory needs no clearing (which no rank could time safely without a second barrier).
     */
    private long epoch;
    private MemorySegment agreeMemory;
    private MpRegistration agreeReg;

    private ReducingCollectives builtin(Communicator comm) {
        return builtins.computeIfAbsent(comm.context(), k -> ReducingCollectives.of(comm));
    }

    // ---- the interpreter ----

    private void run(MscclProgram program, Communicator comm, MemorySegment input, MemorySegment output,
                     long bigElems, DataType type, ReduceOp op) {
        int me = comm.rank();
        MscclProgram.Gpu gpu = program.gpus().get(me);
        int ntb = gpu.tbs().size();
        long chunkElems = bigElems / program.nchunksperloop();
        long region = config.regionBytes();
        semaphoreMemory.fill((byte) 0);
        try (Arena scratchArena = Arena.ofShared()) {
            MemorySegment scratch = gpu.sChunks() == 0 ? MemorySegment.NULL
                    : scratchArena.allocate(gpu.sChunks() * chunkElems * type.bytes(), 64);
            RunPlan plan = new RunPlan(program, me, type, op, input, output, scratch, chunkElems,
                    config.slotBytes());
            MemoryWord[] sem = new MemoryWord[ntb];
            for (int t = 0; t < ntb; t++) {
                sem[t] = MemoryWord.word64(semaphoreMemory, 8L * t, "semaphore of tb " + t);
            }
            List<ThreadBlockRunner> runners = new ArrayList<>();
            for (MscclProgram.ThreadBlock tb : gpu.tbs()) {
                MemorySegment mine = arena.asSlice(region * tb.id(), region);
                MemoryWord[] flags = new MemoryWord[config.slots()];
                for (int s = 0; s < flags.length; s++) {
                    flags[s] = MemoryWord.word64(mine, config.flagsOffset() + 8L * s, "flag of slot " + s);
                }
                runners.add(new ThreadBlockRunner(plan, tb, sem, mine, flags,
                        MemoryWord.word64(mine, config.ackOffset(), "acknowledgements of tb " + tb.id()),
                        stage.asSlice(region * tb.id(), region), config.slots(), config.slotBytes(), epoch << 32));
            }
            new Proxy(program, comm, runners).run();
        }
    }

    /** The caller's thread during a run: starts the blocks, moves their messages, watches the clock. */
    private final class Proxy {
        private final MscclProgram program;
        private final Communicator comm;
        private final List<ThreadBlockRunner> runners;
        private final long[] posted;
        private final long[] acked;
        private final int[] peerTb;
        private final int[] senderTb;
        private final ArrayDeque<MpRequest> pending = new ArrayDeque<>();
        private final AtomicReference<Throwable> blockFailure = new AtomicReference<>();
        private volatile boolean stop;

        Proxy(MscclProgram program, Communicator comm, List<ThreadBlockRunner> runners) {
            this.program = program;
            this.comm = comm;
            this.runners = runners;
            int n = runners.size();
            posted = new long[n];
            acked = new long[n];
            peerTb = new int[n];
            senderTb = new int[n];
            int me = comm.rank();
            for (int i = 0; i < n; i++) {
                MscclProgram.ThreadBlock tb = runners.get(i).tb();
                peerTb[i] = tb.send() < 0 ? -1 : program.tbConnectedTo(tb.send(), me, tb.chan(), false);
                senderTb[i] = tb.recv() < 0 ? -1 : program.tbConnectedTo(tb.recv(), me, tb.chan(), true);
            }
        }

        void run() {
            if (config.threads()) {
                List<Runnable> loops = new ArrayList<>();
                for (ThreadBlockRunner r : runners) {
                    loops.add(() -> drive(r));
                }
                blockThreads.start(loops);
            }
            try {
                loop();
            } finally {
                stop = true;
                if (config.threads()) {
                    blockThreads.join();
                }
            }
        }

        private void drive(ThreadBlockRunner r) {
            try {
                int idle = 0;
                while (!stop && !r.isDone()) {
                    if (r.advance()) {
                        idle = 0;
                    } else {
                        idle = backoff(idle);
                    }
                }
            } catch (Throwable t) {
                blockFailure.compareAndSet(null, t);
            }
        }

        private void loop() {
            long start = System.nanoTime();
            long timeout = config.timeout().toNanos();
            int idle = 0;
            while (true) {
                boolean progress = false;
                if (!config.threads()) {
                    for (ThreadBlockRunner r : runners) {
                        while (r.advance()) {
                            progress = true;
                        }
                    }
                }
                progress |= moveMessages();
                while (!pending.isEmpty() && mp.test(pending.peek())) {
                    pending.poll();
                }
                if (finished()) {
                    break;
                }
                Throwable f = blockFailure.get();
                if (f != null) {
                    throw fail("a thread block failed: " + f, f);
                }
                if (mp.failure() != null) {
                    throw fail("the job failed: " + mp.failure(), null);
                }
                if (System.nanoTime() - start > timeout) {
                    throw fail("it did not finish within " + config.timeout()
                            + " (a dependency cycle, or a peer that is gone or runs something else)", null);
                }
                idle = progress ? 0 : backoff(idle);
            }
            while (!pending.isEmpty()) {
                mp.wait(pending.poll());
            }
        }

        /** Puts every message a block made ready, and acknowledges every message a block consumed. */
        private boolean moveMessages() {
            boolean progress = false;
            long region = config.regionBytes();
            for (int i = 0; i < runners.size(); i++) {
                ThreadBlockRunner r = runners.get(i);
                MscclProgram.ThreadBlock tb = r.tb();
                long ready = r.ready.getAcquire();
                while (posted[i] < ready && pending.size() < MAX_PENDING_PUTS) {
                    long seq = ++posted[i];
                    int slot = (int) ((seq - 1) % config.slots());
                    int peer = comm.worldRank(tb.send());
                    long base = region * peerTb[i];
                    long at = region * tb.id();
                    long bytes = r.messageBytes[slot];
                    pending.add(mp.iput(stage.asSlice(at + (long) slot * config.slotBytes(), bytes), stageReg, peer,
                            base + (long) slot * config.slotBytes(), window, 0));
                    MemorySegment flag = stage.asSlice(at + config.flagsOffset() + 8L * slot, 8);
                    flag.set(ValueLayout.JAVA_LONG, 0, (epoch << 32) + seq);
                    pending.add(mp.iput(flag, stageReg, peer, base + config.flagsOffset() + 8L * slot, window,
                            PutFlags.INLINE));
                    progress = true;
                }
                long consumed = r.consumed.getAcquire();
                if (consumed > acked[i] && pending.size() < MAX_PENDING_PUTS) {
                    acked[i] = consumed;
                    MemorySegment word = stage.asSlice(region * tb.id() + config.ackOffset(), 8);
                    word.set(ValueLayout.JAVA_LONG, 0, (epoch << 32) + consumed);
                    pending.add(mp.iput(word, stageReg, comm.worldRank(tb.recv()),
                            region * senderTb[i] + config.ackOffset(), window, PutFlags.INLINE));
                    progress = true;
                }
            }
            return progress;
        }

        private boolean finished() {
            for (int i = 0; i < runners.size(); i++) {
                ThreadBlockRunner r = runners.get(i);
                if (!r.isDone() || posted[i] < r.ready.getAcquire() || acked[i] < r.consumed.getAcquire()
                        || !r.allAcknowledged()) {
                    return false;
                }
            }
            return true;
        }

        private CollectiveException fail(String why, Throwable cause) {
            stop = true;
            StringBuilder b = new StringBuilder("rank " + comm.rank() + " of " + comm + ": " + program + " failed: "
                    + why + ";");
            for (ThreadBlockRunner r : runners) {
                b.append(' ').append(r.position()).append(';');
            }
            broken = b.toString();
            return new CollectiveException(b.toString(), cause);
        }
    }

    /** Spin briefly, then yield, then sleep a little: ranks and blocks often share few cores. */
    private static int backoff(int idle) {
        if (idle < 64) {
            Thread.onSpinWait();
        } else if (idle < 256) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(20_000);
        }
        return idle + 1;
    }
}
