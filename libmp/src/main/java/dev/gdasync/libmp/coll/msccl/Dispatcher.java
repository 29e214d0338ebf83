package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpWindow;
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
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The work behind {@link MscclRuntime}'s calls: checks a call, finds what its kind resolved to (the first call of a
 * kind agrees with the other ranks, later ones do not), and runs the program or the built-in blocking, on a stream
 * or on the KI executor. Driven by one thread; one collective at a time.
 */
final class Dispatcher implements AutoCloseable {
    private final Collectives coll;
    private final Mp mp;
    private final MscclPrograms programs;
    private final MscclConfig config;
    /** The put path's and the stream form's connection memory: a window over every rank of the Mp. */
    private final MemorySegment arena;
    private final MpWindow window;
    private final MemorySegment stage;
    private final MpRegistration stageReg;
    private final Map<Integer, ReducingCollectives> builtins = new HashMap<>();
    private final Map<Integer, CommCalls> comms = new HashMap<>();
    private final HostInterpreter host;
    private final KiInterpreter ki;
    private final Arena scratchArena = Arena.ofShared();
    /** The stream built-ins, generated once per collective, rank count and layout. */
    private final Map<String, MscclProgram> generated = new HashMap<>();
    private StreamInterpreter streams;
    private PutChannel puts;
    private MemorySegment streamScratch;
    private CommCalls lastComm;
    /** What the last dispatched call ran: a program, or empty for a built-in. */
    private Optional<MscclProgram> ran = Optional.empty();
    /** The direct channel a blocking built-in call began on, which {@link #builtinDone} ends. */
    private DirectChannel builtinOn;
    /** The last blocking run of a program (for tests: which path it took). */
    private HostRun lastHost;
    private String broken;
    private boolean closed;
    /**
     * The number of the last call on this rank (the put path's, the stream and the KI form's run number): flags and
     * acknowledgements carry it in their upper 32 bits, so whatever an earlier run left is below every value this run
     * waits for. Agreed by the first call of a kind, counted by the later ones.
     */
    private long epoch;
    private MemorySegment agreeMemory;
    private MpRegistration agreeReg;

    /** Collective over every rank of the Mp (the window and the KI form's heap). */
    Dispatcher(Collectives coll, MscclPrograms programs, MscclConfig config) {
        this.coll = coll;
        this.mp = coll.mp();
        this.programs = programs;
        this.config = config;
        long bytes = config.regionBytes() * config.maxThreadBlocks();
        this.arena = mp.allocate(bytes);
        this.window = mp.windowCreate(arena);
        this.stage = mp.allocate(bytes);
        this.stageReg = mp.register(stage);
        this.host = new HostInterpreter(mp, config, programs.programs());
        this.ki = new KiInterpreter(mp, config);
    }

    // ---- the collectives: check, then dispatch ----

    Optional<MscclProgram> allreduce(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                     MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                     ReduceOp op, Trigger how) {
        long bytes = check("allreduce", comm, send, sendReg, recv, recvReg, count, type, op, count, count);
        CollBuffers.requireSameOrDisjoint(send, recv, bytes);
        boolean inPlace = send.address() == recv.address();
        if (dispatch(comm, Collective.ALLREDUCE.ordinal(), inPlace, -1, count, bytes, count, type, op, send, sendReg,
                inPlace ? send : recv, inPlace ? sendReg : recvReg, how)) {
            try {
                builtin(comm).allreduce(send, sendReg, recv, recvReg, count, type, op);
            } finally {
                builtinDone();
            }
        }
        return ran;
    }

    Optional<MscclProgram> allgather(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                     MemorySegment recv, MpRegistration recvReg, long sendCount, DataType type,
                                     Trigger how) {
        long total = CollBuffers.product("allgather", "sendCount", sendCount, comm.size(), "ranks");
        long block = check("allgather", comm, send, sendReg, recv, recvReg, sendCount, type, ReduceOp.SUM, sendCount,
                total);
        CollBuffers.requireInPlaceAt(recv, send, block, comm.rank() * block, "recv + rank · sendCount");
        boolean inPlace = send.address() == recv.address() + comm.rank() * block && block > 0;
        if (dispatch(comm, Collective.ALLGATHER.ordinal(), inPlace, -1, sendCount, block, total, type, ReduceOp.SUM,
                inPlace ? recv : send, inPlace ? recvReg : sendReg, recv, recvReg, how)) {
            try {
                builtin(comm).allgather(send, sendReg, recv, recvReg, sendCount, type);
            } finally {
                builtinDone();
            }
        }
        return ran;
    }

    Optional<MscclProgram> alltoall(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                    MemorySegment recv, MpRegistration recvReg, long count, DataType type,
                                    Trigger how) {
        long total = CollBuffers.product("alltoall", "count", count, comm.size(), "ranks");
        check("alltoall", comm, send, sendReg, recv, recvReg, count, type, ReduceOp.SUM, total, total);
        CollBuffers.requireSameOrDisjoint(send, recv, total * type.bytes());
        boolean inPlace = send.address() == recv.address();
        if (dispatch(comm, Collective.ALLTOALL.ordinal(), inPlace, -1, count, count * type.bytes(), total, type,
                ReduceOp.SUM, send, sendReg, recv, recvReg, how)) {
            try {
                builtin(comm).alltoall(send, sendReg, recv, recvReg, count, type);
            } finally {
                builtinDone();
            }
        }
        return ran;
    }

    Optional<MscclProgram> reduceScatter(Communicator comm, MemorySegment send, MpRegistration sendReg,
                                         MemorySegment recv, MpRegistration recvReg, long recvCount, DataType type,
                                         ReduceOp op, Trigger how) {
        long total = CollBuffers.product("reduceScatter", "recvCount", recvCount, comm.size(), "ranks");
        long block = check("reduceScatter", comm, send, sendReg, recv, recvReg, recvCount, type, op, total,
                recvCount);
        CollBuffers.requireInPlaceAt(send, recv, block, comm.rank() * block, "send + rank · recvCount");
        boolean inPlace = recv.address() == send.address() + comm.rank() * block && block > 0;
        if (dispatch(comm, Collective.REDUCE_SCATTER.ordinal(), inPlace, -1, recvCount, block, total, type, op, send,
                sendReg, inPlace ? send : recv, inPlace ? sendReg : recvReg, how)) {
            try {
                builtin(comm).reduceScatter(send, sendReg, recv, recvReg, recvCount, type, op);
            } finally {
                builtinDone();
            }
        }
        return ran;
    }

    Optional<MscclProgram> reduce(Communicator comm, MemorySegment send, MpRegistration sendReg, MemorySegment recv,
                                  MpRegistration recvReg, long count, DataType type, ReduceOp op, int root,
                                  Trigger how) {
        Objects.requireNonNull(comm, "comm must not be null");
        requireRoot(comm, root);
        boolean isRoot = comm.rank() == root;
        long bytes = isRoot ? check("reduce", comm, send, sendReg, recv, recvReg, count, type, op, count, count)
                : check("reduce", comm, send, sendReg, send, sendReg, count, type, op, count, count);
        if (isRoot) {
            CollBuffers.requireSameOrDisjoint(send, recv, bytes);
        }
        if (dispatch(comm, CallRecord.REDUCE, false, root, count, bytes, count, type, op, send, sendReg,
                isRoot ? recv : send, isRoot ? recvReg : sendReg, how)) {
            try {
                builtin(comm).reduce(send, sendReg, recv, recvReg, count, type, op, root);
            } finally {
                builtinDone();
            }
        }
        return ran;
    }

    Optional<MscclProgram> broadcast(Communicator comm, MemorySegment buf, MpRegistration reg, long count,
                                     DataType type, int root, Trigger how) {
        Objects.requireNonNull(comm, "comm must not be null");
        requireRoot(comm, root);
        long bytes = check("broadcast", comm, buf, reg, buf, reg, count, type, ReduceOp.SUM, count, count);
        if (dispatch(comm, CallRecord.BROADCAST, false, root, count, bytes, count, type, ReduceOp.SUM, buf, reg, buf,
                reg, how)) {
            try {
                builtin(comm).broadcast(buf, reg, count, type, root);
            } finally {
                builtinDone();
            }
        }
        return ran;
    }

    private static void requireRoot(Communicator comm, int root) {
        if (root < 0 || root >= comm.size()) {
            throw new IllegalArgumentException("root " + root + " is outside " + comm + ": ranks are 0.."
                    + (comm.size() - 1));
        }
    }

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

    // ---- dispatch ----

    /**
     * Finds (or agrees on) what the call's kind runs, and runs it, unless that is the blocking built-in: the caller
     * runs that itself (no closure is made per call) and then calls {@link #builtinDone}. What ran is left in
     * {@link #ran}.
     *
     * @param collective a {@link Collective} ordinal, {@link CallRecord#REDUCE} or {@link CallRecord#BROADCAST}
     * @param count      the count the caller passed (the record's)
     * @param callBytes  the size a program is selected by (NCCL's count × element size)
     * @param bigElems   elements of the larger buffer
     * @param input      the program's input (in place: the one buffer)
     * @param output     the program's output (in place: the one buffer)
     * @return whether the caller must run the blocking built-in now
     */
    private boolean dispatch(Communicator comm, int collective, boolean inPlace, int root, long count, long callBytes,
                             long bigElems, DataType type, ReduceOp op, MemorySegment input, MpRegistration inputReg,
                             MemorySegment output, MpRegistration outputReg, Trigger how) {
        long kind = CallRecord.kind(collective, inPlace, how.code(), type, op, root);
        CommCalls cc = commCalls(comm);
        PreparedCall call = cc == null ? null : cc.find(kind, count);
        if (how.stream() == null || call == null) {
            // The CPU is about to post (the agreement, the built-in, a host or KI run): the NIC stream must be done.
            if (how.stream() != null) {
                how.stream().synchronize();
            }
            quiesceStreams();
        }
        if (call == null) {
            Optional<MscclProgram> p = collective < CallRecord.REDUCE
                    ? programs.select(Collective.values()[collective], inPlace, comm.size(), callBytes, bigElems)
                    .filter(x -> x.gpus().stream().allMatch(g -> g.tbs().size() <= config.maxThreadBlocks()))
                    : Optional.empty();
            CallRecord record = new CallRecord(kind, p.map(x -> programs.programs().indexOf(x) + 1L).orElse(0L), count,
                    comm.context());
            agree(comm, record);
            if (cc == null) {
                cc = openComm(comm);
            }
            call = new PreparedCall(record, p);
            cc.add(call);
        } else {
            epoch++;
        }
        ran = call.program;
        DirectChannel direct = cc.direct;
        if (how == Trigger.BLOCKING) {
            if (call.program.isPresent()) {
                runHost(call, cc, type, op, bigElems, input, inputReg, output, outputReg);
                return false;
            }
            if (direct != null) {
                direct.begin(call.record, null, null, null, null);
            }
            builtinOn = direct;
            return true;
        }
        MscclProgram run = call.program.orElseGet(() -> generated(comm, collective, inPlace, root));
        if (direct != null) {
            // The stream and KI forms use their own memory; say which call this rank is in, for peers that wait.
            direct.begin(call.record, null, null, null, null);
            direct.end();
        }
        if (run == null) {
            if (how.stream() != null) {
                how.stream().synchronize();
            }
            builtinOn = null;
            return true;
        }
        if (how.ki() != null) {
            runKi(run, comm, input, output, bigElems, type, op, how.ki());
        } else {
            if (cc.lastWindowProgram != null && cc.lastWindowProgram != run) {
                // The barrier posts from the CPU: the runtime's streams must be done with the window first.
                how.stream().synchronize();
                quiesceStreams();
            }
            changeWindowProgram(cc, run);
            enqueueRun(run, comm, input, output, bigElems, type, op, how.stream());
        }
        return false;
    }

    /** Ends a blocking built-in call: the communicator's regions are free for the next one. */
    private void builtinDone() {
        if (builtinOn != null) {
            builtinOn.end();
            builtinOn = null;
        }
    }

    /** @return the built-in as a program for streams and KI, or null where it does not fit (too many ranks) */
    private MscclProgram generated(Communicator comm, int collective, boolean inPlace, int root) {
        int n = comm.size();
        if (collective == CallRecord.REDUCE) {
            return generated.computeIfAbsent("reduce/" + n + "/" + root, k -> TreePrograms.reduce(n, root));
        }
        if (collective == CallRecord.BROADCAST) {
            return generated.computeIfAbsent("broadcast/" + n + "/" + root, k -> TreePrograms.broadcast(n, root));
        }
        Collective c = Collective.values()[collective];
        return n > config.maxThreadBlocks() ? null
                : generated.computeIfAbsent(c + "/" + n + "/" + inPlace, k -> AllPairsPrograms.of(c, n, inPlace));
    }

    private CommCalls commCalls(Communicator comm) {
        CommCalls cc = lastComm;
        if (cc == null || cc.comm != comm) {
            cc = comms.get(comm.context());
            if (cc != null) {
                lastComm = cc;
            }
        }
        return cc;
    }

    /**
     * Makes the communicator's state at its first call (every member is in the same agreement, so all of them make
     * it together): the direct connections when every member maps every other's memory.
     */
    private CommCalls openComm(Communicator comm) {
        int n = comm.size();
        int regions = 0;
        for (MscclProgram p : programs.programs()) {
            if (p.ngpus() == n) {
                for (MscclProgram.Gpu g : p.gpus()) {
                    regions = Math.max(regions, g.tbs().size());
                }
            }
        }
        regions = Math.min(regions, config.maxThreadBlocks());
        DirectChannel direct = n < 2 ? null
                : DirectChannel.open(mp, comm, builtin(comm), regions, config.slots(), config.slotBytes());
        CommCalls cc = new CommCalls(comm, direct);
        comms.put(comm.context(), cc);
        lastComm = cc;
        return cc;
    }

    /**
     * The first call of a kind: an allreduce (MAX) of the call's fingerprint, its negation and this rank's last run
     * number shows any difference to every rank, which then all refuse; the largest number + 1 numbers this call on
     * every rank.
     */
    private void agree(Communicator comm, CallRecord record) {
        if (agreeMemory == null) {
            agreeMemory = mp.allocate(24);
            agreeReg = mp.register(agreeMemory);
        }
        long fingerprint = record.fingerprint();
        agreeMemory.set(ValueLayout.JAVA_LONG, 0, fingerprint);
        agreeMemory.set(ValueLayout.JAVA_LONG, 8, -fingerprint);
        agreeMemory.set(ValueLayout.JAVA_LONG, 16, epoch);
        builtin(comm).allreduce(agreeMemory, agreeReg, agreeMemory, agreeReg, 3, DataType.INT64, ReduceOp.MAX);
        if (agreeMemory.get(ValueLayout.JAVA_LONG, 0) != -agreeMemory.get(ValueLayout.JAVA_LONG, 8)) {
            throw new IllegalStateException("rank " + comm.rank() + " of " + comm + " chose "
                    + record.describe(programs.programs()) + " but other ranks chose otherwise: load the same "
                    + "programs and pass the same count, type, operator and root on every rank, in the same form");
        }
        epoch = agreeMemory.get(ValueLayout.JAVA_LONG, 16) + 1;
    }

    private ReducingCollectives builtin(Communicator comm) {
        return builtins.computeIfAbsent(comm.context(), k -> ReducingCollectives.of(comm));
    }

    // ---- the three forms ----

    private void runHost(PreparedCall call, CommCalls cc, DataType type, ReduceOp op, long bigElems,
                         MemorySegment input, MpRegistration inputReg, MemorySegment output,
                         MpRegistration outputReg) {
        HostRun run = call.host;
        if (run == null) {
            MscclProgram program = call.program.orElseThrow();
            MscclProgram.Gpu gpu = program.gpus().get(cc.comm.rank());
            long scratchBytes = gpu.sChunks() * (bigElems / program.nchunksperloop()) * type.bytes();
            MemorySegment scratch = scratchBytes == 0 ? MemorySegment.NULL : scratchArena.allocate(scratchBytes, 64);
            run = new HostRun(program, cc.comm, call.record, type, op, bigElems, config, scratch, cc.direct,
                    cc.direct == null ? puts() : null, programs.programs());
            call.host = run;
        }
        lastHost = run;
        if (cc.direct == null) {
            changeWindowProgram(cc, run.program);
        }
        try {
            host.run(run, input, inputReg, output, outputReg, puts, epoch);
        } catch (CollectiveException e) {
            broken = e.getMessage();
            throw e;
        }
    }

    /**
     * On the window (the put path and streams) a region is reused by the next run without a barrier because a run ends
     * only when its messages were acknowledged; that holds while the same program, so the same sender, uses each
     * region. When the program changes, a fast rank could put into a region a slow one still reads: the members
     * synchronize first (once per change, every member makes the same sequence of calls on the communicator).
     */
    private void changeWindowProgram(CommCalls cc, MscclProgram program) {
        if (cc.lastWindowProgram != null && cc.lastWindowProgram != program) {
            cc.comm.barrier();
        }
        cc.lastWindowProgram = program;
    }

    private PutChannel puts() {
        if (puts == null) {
            puts = new PutChannel(mp, config, arena, window, stage, stageReg);
        }
        return puts;
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

    /** Scratch for stream and KI runs: kept until close, since a stream run may still use it after the call. */
    private MemorySegment scratch(long bytes) {
        if (bytes == 0) {
            return MemorySegment.NULL;
        }
        if (streamScratch == null || streamScratch.byteSize() < bytes) {
            streamScratch = scratchArena.allocate(bytes, 64);
        }
        return streamScratch;
    }

    /** @return the last blocking run of a program, or null */
    HostRun lastHostRun() {
        return lastHost;
    }

    /** Collective over every rank of the Mp. */
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
        host.close();
        mp.windowDestroy(window);
        for (CommCalls cc : comms.values()) {
            cc.close();
        }
        scratchArena.close();
        for (ReducingCollectives r : builtins.values()) {
            r.close();
        }
        if (agreeMemory != null) {
            mp.deregister(agreeReg);
            mp.free(agreeMemory);
        }
        mp.deregister(stageReg);
        mp.free(stage);
        mp.free(arena);
    }
}
