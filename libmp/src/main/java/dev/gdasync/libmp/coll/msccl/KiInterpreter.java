package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.ki.ShmemKiLayout;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.shmem.Shmem;
import dev.gdasync.libmp.shmem.ShmemKi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The KI form of the interpreter: the calling thread prepares, the KI executor's blocks run the program. Its
 * connections lie in a symmetric heap of its own (a {@link Shmem} over the runtime's Mp, made when the runtime opens):
 * a receive region per thread block (slots, a flag per
 * slot, the acknowledgement word), a staging region per thread block (the sources of its puts) and a semaphore word
 * per thread block. Per launch the CPU prepares, with {@link Shmem#kiPrepare}, exactly the templated puts the launch
 * will ring toward each PE (each message is a put-with-signal, two puts; each acknowledgement a p), encodes this
 * rank's thread blocks with {@link MscclDeviceTable#encodeRank}, lets the launcher run and join the launch, and
 * completes the prepared slots. A run whose puts toward a PE do not fit one launch (half the send queue, and the
 * Mp's request pool) runs as several launches over consecutive tiles; each launch ends only when every message it
 * sent was acknowledged. When the job fails during a launch, the prepared launch's listener aborts it through its
 * table ({@link ShmemKi}): every block's wait ends within moments, and the run fails naming the job's failure.
 */
final class KiInterpreter implements AutoCloseable {
    private final Mp mp;
    private final MscclConfig config;
    private final Shmem shmem;
    private final MemorySegment regions;
    private final MemorySegment staging;
    private final MemorySegment semaphores;

    /** Collective over every rank of the Mp. */
    KiInterpreter(Mp mp, MscclConfig config) {
        this.mp = mp;
        this.config = config;
        long region = config.regionBytes() * config.maxThreadBlocks();
        this.shmem = Shmem.init(mp, 2 * region + 8L * config.maxThreadBlocks() + 64 * 1024);
        this.regions = shmem.calloc(region / 8, 8);
        this.staging = shmem.calloc(region / 8, 8);
        this.semaphores = shmem.calloc(config.maxThreadBlocks(), 8);
    }

    /**
     * Runs this rank's {@code <gpu>} of one run on the launcher's executor and returns when it ended.
     *
     * @param epoch the run's number
     * @throws CollectiveException if a launch failed (a block timed out, a peer was lost), naming the block and step
     */
    void run(MscclProgram program, Communicator comm, RunPlan plan, long epoch, MscclKiLauncher launcher) {
        int me = comm.rank();
        MscclProgram.Gpu gpu = program.gpus().get(me);
        int ntb = gpu.tbs().size();
        if (plan.tiles() == 0 || ntb == 0) {
            return;
        }
        int[] pes = new int[comm.size()];
        for (int r = 0; r < pes.length; r++) {
            pes[r] = comm.worldRank(r);
        }
        long perTile = slotsPerTile(program, pes);
        int depth = mp.config().queuePairs().sendDepth();
        long limit = Math.min(depth / 2, mp.size() > 1 ? mp.requestPoolSize() / 2 / (mp.size() - 1) : depth / 2);
        if (perTile > limit) {
            throw new IllegalStateException(program + " needs " + perTile + " puts toward one PE per tile, more than "
                    + "the " + limit + " one KI launch may prepare (half the send queue and of the Mp's request pool "
                    + "per PE), so nothing was run");
        }
        int tilesPerLaunch = perTile == 0 ? plan.tiles() : (int) Math.min(plan.tiles(), limit / perTile);
        for (int t0 = 0; t0 < plan.tiles(); t0 += tilesPerLaunch) {
            int t1 = Math.min(plan.tiles(), t0 + tilesPerLaunch);
            int slots = (int) Math.max(1, perTile * (t1 - t0));
            ShmemKi ki = shmem.kiPrepare(launcher.executor(), ntb, slots, config.timeout());
            try (Arena arena = Arena.ofConfined()) {
                // Every path from here completes the prepared launch (launch() does). An encoding failure (none is
                // expected: the program was validated and the count divides) completes it unrung, which ends with the
                // Mp's wait timeout, rather than leaving the heap refusing every later call.
                long heap = ki.state().get(ValueLayout.JAVA_LONG, ShmemKiLayout.S_HEAP);
                MscclDeviceTable.KiLayout layout = new MscclDeviceTable.KiLayout(
                        offset(plan, Buffer.INPUT, heap), offset(plan, Buffer.OUTPUT, heap),
                        gpu.sChunks() == 0 ? 0 : offset(plan, Buffer.SCRATCH, heap), regions.address() - heap,
                        staging.address() - heap, semaphores.address() - heap, config.regionBytes(), pes);
                MemorySegment table;
                try {
                    table = MscclDeviceTable.encodeRank(program, me, plan.type(), plan.op(), plan.bigElems(),
                            config.slots(), config.slotBytes(), epoch, layout, arena);
                } catch (RuntimeException e) {
                    ki.complete();
                    throw e;
                }
                launch(launcher, new MscclKiLaunch(ki.table(), ki.state(), table, ntb, t0, t1), ki, comm, program);
            }
        }
    }

    private void launch(MscclKiLauncher launcher, MscclKiLaunch l, ShmemKi ki, Communicator comm,
                        MscclProgram program) {
        RuntimeException failure = null;
        try {
            launcher.launch(l);
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            ki.complete();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            // A peer's death aborted the launch (ShmemKi's listener): say so first, naming the rank.
            String jobFailure = mp.failure();
            throw new CollectiveException("rank " + comm.rank() + " of " + comm + ": " + program + " failed on the KI "
                    + "executor (tiles " + l.firstTile() + ".." + (l.endTile() - 1) + "): "
                    + (jobFailure == null ? "" : "the job failed: " + jobFailure + "; ") + failure.getMessage(),
                    failure);
        }
    }

    /** The puts one tile rings toward the busiest PE, over every rank of the program (so all ranks agree). */
    private static long slotsPerTile(MscclProgram program, int[] pes) {
        long most = 0;
        for (MscclProgram.Gpu g : program.gpus()) {
            java.util.Map<Integer, Long> toward = new java.util.HashMap<>();
            for (MscclProgram.ThreadBlock tb : g.tbs()) {
                long sends = tb.steps().stream().filter(s -> s.type().sends()).count();
                long recvs = tb.steps().stream().filter(s -> s.type().receives()).count();
                if (tb.send() >= 0) {
                    toward.merge(pes[tb.send()], 2 * sends, Long::sum);
                }
                if (tb.recv() >= 0) {
                    toward.merge(pes[tb.recv()], recvs, Long::sum);
                }
            }
            for (long v : toward.values()) {
                most = Math.max(most, v);
            }
        }
        return most;
    }

    /** A buffer's chunk 0 as an offset from the heap's base (the buffers lie outside it: the offset wraps). */
    private static long offset(RunPlan plan, Buffer b, long heap) {
        return plan.piece(b, 0, 0).address() - heap;
    }

    /** Collective: ends the heap. */
    @Override
    public void close() {
        shmem.close();
    }
}
