package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * What a blocking run of one kind of call needs, made by its first run and kept for every later one: the geometry
 * (chunks, tiles), the scratch buffer, one {@link BlockRunner} per thread block of this rank with its connections,
 * and which messages land directly in the receiver's buffer. A later run only rebinds the call's buffers.
 */
final class HostRun {
    /**
     * Messages of at least this many bytes a tile land straight in the receiver's buffer where the program allows
     * ({@link DirectPlacement}); smaller ones go through the slots, whose copy costs less than the receiver's
     * extra look at the sender's buffers.
     */
    static final long DIRECT_MIN_BYTES = 4096;

    final MscclProgram program;
    final Communicator comm;
    final CallRecord record;
    /** The geometry, rebound to each run's buffers. */
    final RunPlan plan;
    final BlockRunner[] runners;
    final long[] semaphores;
    /** The direct connections, or null: the put path. */
    final DirectChannel direct;
    final List<SendLink> sends = new ArrayList<>();
    final List<RecvLink> recvs = new ArrayList<>();
    /** Whether some message lands directly in this rank's buffers, so the run publishes them. */
    final boolean exposesBuffers;
    /** The communicator's call number of this kind's last run that finished here (direct path), or 0. */
    long lastSeq;

    /**
     * @param bigElems elements of the call's larger buffer
     * @param scratch  the program's scratch chunks for this size (NULL if it has none)
     * @param direct   the communicator's direct connections, or null to use {@code puts}
     */
    HostRun(MscclProgram program, Communicator comm, CallRecord record, DataType type, ReduceOp op, long bigElems,
            MscclConfig config, MemorySegment scratch, DirectChannel direct, PutChannel puts,
            List<MscclProgram> programs) {
        this.program = program;
        this.comm = comm;
        this.record = record;
        this.direct = direct;
        int me = comm.rank();
        MscclProgram.Gpu gpu = program.gpus().get(me);
        long chunkElems = bigElems / program.nchunksperloop();
        RunPlan tiled = new RunPlan(program, me, type, op, MemorySegment.NULL, MemorySegment.NULL, scratch,
                chunkElems, config.slotBytes());
        DirectPlacement order = direct != null ? DirectPlacement.of(program) : null;
        DirectPlacement placement = order != null && tiled.maxTileBytes() >= DIRECT_MIN_BYTES ? order : null;
        // Tiles exist so that messages fit the slots. When every message lands in its receiver's buffer, a chunk
        // moves in one copy and one flag instead: a block runs every step of a tile before the next tile, so smaller
        // tiles would not pipeline a forwarded chunk, they would only add hand-offs (ring allgather: n − 1 a tile).
        this.plan = placement != null && placement.allDirect()
                ? new RunPlan(program, me, type, op, MemorySegment.NULL, MemorySegment.NULL, scratch, chunkElems,
                Long.MAX_VALUE) : tiled;
        // Every message of the run fits its flag's line: one cache line carries both.
        boolean inline = plan.maxTileBytes() * program.maxCnt() <= HostArea.INLINE_BYTES;
        this.semaphores = new long[gpu.tbs().size()];
        this.runners = new BlockRunner[gpu.tbs().size()];
        boolean exposes = false;
        for (MscclProgram.ThreadBlock tb : gpu.tbs()) {
            SendLink send = null;
            RecvLink recv = null;
            if (tb.send() >= 0) {
                int peerTb = program.tbConnectedTo(tb.send(), me, tb.chan(), false);
                send = direct != null ? direct.sender(tb.id(), tb.send(), peerTb, tb.chan(), inline, programs)
                        : puts.sender(tb.id(), tb.send(), comm.worldRank(tb.send()), peerTb, tb.chan());
                sends.add(send);
            }
            if (tb.recv() >= 0) {
                int senderTb = program.tbConnectedTo(tb.recv(), me, tb.chan(), true);
                recv = direct != null ? direct.receiver(tb.id(), tb.recv(), tb.chan(), inline, programs)
                        : puts.receiver(tb.id(), tb.recv(), comm.worldRank(tb.recv()), senderTb, tb.chan());
                recvs.add(recv);
                for (MscclProgram.Step st : tb.steps()) {
                    exposes |= placement != null && st.type().receives()
                            && placement.landsDirectly(me, tb.id(), st.s());
                }
            }
            runners[tb.id()] = new BlockRunner(program, me, tb, semaphores, send, recv, placement, order);
        }
        this.exposesBuffers = exposes;
    }

    /** @return whether every block ran every step and its connections drained */
    boolean finished() {
        for (BlockRunner r : runners) {
            if (!r.isFinished()) {
                return false;
            }
        }
        return true;
    }

    /** @return whether every block that has not finished waits for another block of this rank: none can go on */
    boolean deadlocked() {
        boolean any = false;
        for (BlockRunner r : runners) {
            if (!r.isDone()) {
                if (!r.waitsForDependency()) {
                    return false;
                }
                any = true;
            }
        }
        return any;
    }

    /** @return every block's position, for a failure's message */
    String positions() {
        StringBuilder b = new StringBuilder();
        for (BlockRunner r : runners) {
            b.append(' ').append(r.position()).append(';');
        }
        return b.toString();
    }
}
