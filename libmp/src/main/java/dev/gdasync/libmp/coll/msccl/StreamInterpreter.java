package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.JobFailureSubscription;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.PutFlags;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Communicator;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The stream (SA) form of the interpreter: the calling thread turns one run of this rank's {@code <gpu>} into
 * stream work and returns; streams run it in order with the caller's stream. Each thread block has a host stream
 * of its own, kept for the runtime's life, whose work per step is: WAIT64 GEQ on the dependency's semaphore, on the
 * slot's flag and on the acknowledgement that frees the send slot; the copy/reduce as a host task; WRITE64 of the
 * block's consumed and ready counters and of its semaphore. One more host stream per rank, the NIC stream, plays
 * NCCL's proxy: for each message in {@link StreamSchedule}'s order it waits (WAIT64 GEQ) for the block's ready
 * counter and rings two prepared puts, the data and its flag; for each consumed message it waits for the consumed
 * counter and rings the acknowledgement's put. Every put of a queue pair is rung by this one stream, in prepare
 * order, as LibMP's SA model requires. Flags and acknowledgements are INLINE puts: their value is copied into the
 * work request when it is prepared, so no source word is shared between messages.
 *
 * <p>Waits time out after {@link MscclConfig#timeout}: the stream fails with a
 * {@link dev.gdasync.gdsync.memop.WaitTimeoutException} whose word is named for the rank, thread block, step, tile
 * and what it waits for, and the caller's stream, which waits for every block's end, fails with it. A peer's death
 * does not wait for that: a listener of the Mp's job failure, registered for the interpreter's life, aborts every
 * one of its streams ({@link HostStream#abort}), so their waits end at once with a {@link CollectiveException} that
 * gives the job's failure, naming the rank, and the caller's stream fails with it (docs/msccl.md).
 */
final class StreamInterpreter implements AutoCloseable {
    private final Mp mp;
    private final MscclConfig config;
    private final MemorySegment arena;
    private final MpWindow window;
    private final MemorySegment stage;
    private final MpRegistration stageReg;
    /** Per thread block: its semaphore, ready and consumed counters (three 64-bit words). */
    private final MemorySegment counters;
    private final MemorySegment inlineSource;
    private final MpRegistration inlineReg;
    /** Written by the calling thread, read by the job-failure listener's (hence copy-on-write, and volatile). */
    private final List<HostStream> blockStreams = new CopyOnWriteArrayList<>();
    private volatile HostStream nic;
    /** Why the job failed, once the listener ran: a stream started later is aborted when it starts. */
    private volatile String jobFailure;
    private final JobFailureSubscription abortOnJobFailure;
    /**
     * Puts prepared toward each PE since the calling thread last waited for the NIC stream to ring everything: kept
     * across calls, because runs enqueued back to back share the queue pairs, whose prepared and rung puts wait for
     * the NIC. Past a quarter of a send queue the caller drains first: a prepare into a full queue would spin in the
     * Mp until the NIC frees space, taking a CPU from the NIC and the streams (docs/msccl.md).
     */
    private final int[] sinceDrain;

    StreamInterpreter(Mp mp, MscclConfig config, MemorySegment arena, MpWindow window, MemorySegment stage,
                      MpRegistration stageReg) {
        this.mp = mp;
        this.config = config;
        this.arena = arena;
        this.window = window;
        this.stage = stage;
        this.stageReg = stageReg;
        this.counters = mp.allocate(24L * config.maxThreadBlocks());
        this.sinceDrain = new int[mp.size()];
        this.inlineSource = mp.allocate(8);
        this.inlineReg = mp.register(inlineSource);
        this.abortOnJobFailure = mp.onJobFailure(this::jobFailed);
    }

    /** The job failed (the bootstrap's thread): no peer will write the words the streams wait for. */
    private void jobFailed(String reason) {
        jobFailure = reason;
        for (HostStream s : all()) {
            abort(s, reason);
        }
    }

    private void abort(HostStream s, String reason) {
        s.abort(new CollectiveException("rank " + mp.rank() + ": the MSCCL run on stream '" + s.name()
                + "' stopped: the job failed: " + reason, null));
    }

    /** A stream just made: aborted at once if the job failed already (the listener may have run before it). */
    private void started(HostStream s) {
        String failed = jobFailure;
        if (failed != null) {
            abort(s, failed);
        }
    }

    /** @return the first failure of one of its streams, or null */
    Throwable failure() {
        for (HostStream s : all()) {
            if (s.failure() != null) {
                return s.failure();
            }
        }
        return null;
    }

    /** Waits until everything enqueued has run (so the CPU may use the Mp's queue pairs again). */
    void quiesce() {
        for (HostStream s : all()) {
            s.synchronize();
        }
    }

    private List<HostStream> all() {
        List<HostStream> l = new ArrayList<>(blockStreams);
        if (nic != null) {
            l.add(nic);
        }
        return l;
    }

    /**
     * Enqueues one run after the work already on {@code caller}, and makes {@code caller} wait for its end.
     *
     * @param base the run's epoch in the upper 32 bits
     */
    void enqueue(MscclProgram program, Communicator comm, RunPlan plan, long base, Stream caller) {
        int me = comm.rank();
        MscclProgram.Gpu gpu = program.gpus().get(me);
        List<StreamSchedule.Ring> rings = StreamSchedule.rings(program, plan, config.slots(), me);
        // Not low-latency spinning: on few CPUs the spinning streams starve the NIC's agent (docs/msccl.md).
        WaitPolicy policy = new WaitPolicy(MscclConfig.WAIT_BACKOFF, config.timeout().toNanos());
        while (blockStreams.size() < gpu.tbs().size()) {
            HostStream s = HostStream.create("msccl-r" + mp.rank() + "-tb" + blockStreams.size(), policy);
            blockStreams.add(s);
            started(s);
        }
        if (nic == null) {
            nic = HostStream.create("msccl-r" + mp.rank() + "-nic", policy);
            started(nic);
        }
        Event start = caller.record();
        List<Event> ends = new ArrayList<>();
        for (MscclProgram.ThreadBlock tb : gpu.tbs()) {
            HostStream s = blockStreams.get(tb.id());
            s.waitEvent(start);
            postBlock(s, program, plan, tb, me, base);
            ends.add(s.record());
        }
        nic.waitEvent(start);
        postRings(rings, program, comm, base);
        ends.add(nic.record());
        for (Event e : ends) {
            caller.waitEvent(e);
        }
    }

    /** One thread block's steps, tile by tile, as waits, a host task and writes on its stream. */
    private void postBlock(HostStream s, MscclProgram program, RunPlan plan, MscclProgram.ThreadBlock tb, int me,
                           long base) {
        int t = tb.id();
        long region = config.regionBytes();
        MemorySegment recvRegion = arena.asSlice(region * t, region);
        MemorySegment myStage = stage.asSlice(region * t, region);
        long recvSeq = 0;
        long sendSeq = 0;
        int steps = tb.steps().size();
        for (int tile = 0; tile < plan.tiles() && steps > 0; tile++) {
            for (MscclProgram.Step st : tb.steps()) {
                String at = "rank " + me + " tb " + t + " step " + st.s() + " (" + st.type().xml() + ", tile " + tile
                        + " of " + plan.tiles() + ") waiting for ";
                List<Memop> waits = new ArrayList<>(3);
                if (st.depid() >= 0) {
                    long need = (long) tile * plan.steps(st.depid()) + st.deps() + 1;
                    waits.add(wait(counters, 24L * st.depid(), base + need,
                            at + "tb " + st.depid() + " step " + st.deps() + " (its semaphore)"));
                }
                boolean receives = st.type().receives();
                boolean sends = st.type().sends();
                long rq = recvSeq + 1;
                long sq = sendSeq + 1;
                if (receives) {
                    waits.add(wait(recvRegion, config.flagsOffset() + 8 * ((rq - 1) % config.slots()), base + rq,
                            at + "message " + rq + " from rank " + tb.recv() + " on channel " + tb.chan()));
                }
                if (sends && sq > config.slots()) {
                    waits.add(wait(recvRegion, config.ackOffset(), base + sq - config.slots(),
                            at + "a free slot to rank " + tb.send() + " on channel " + tb.chan()));
                }
                if (!waits.isEmpty()) {
                    s.post(MemopBatch.of(waits));
                }
                if (st.type() != StepType.NOP) {
                    MemorySegment in = receives ? slot(recvRegion, rq) : null;
                    MemorySegment out = sends ? slot(myStage, sq) : null;
                    int k = tile;
                    s.launch(() -> StepKernel.execute(plan, st, k, in, out));
                }
                List<Memop> writes = new ArrayList<>(3);
                if (receives) {
                    recvSeq = rq;
                    writes.add(write(t, 2, base + rq));
                }
                if (sends) {
                    sendSeq = sq;
                    writes.add(write(t, 1, base + sq));
                }
                if (st.hasdep()) {
                    writes.add(write(t, 0, base + (long) tile * steps + st.s() + 1));
                }
                if (!writes.isEmpty()) {
                    s.post(MemopBatch.of(writes));
                }
            }
        }
        if (sendSeq > 0) {
            // Every message acknowledged: its data has left the staging slots and the receiver's slots are free,
            // so the next run may use both without a barrier.
            s.post(MemopBatch.of(wait(recvRegion, config.ackOffset(), base + sendSeq, "rank " + me + " tb " + t
                    + " after its last step waiting for rank " + tb.send() + " to acknowledge message " + sendSeq)));
        }
    }

    /** The NIC stream: each ring waits for its block's counter, then rings prepared puts. */
    private void postRings(List<StreamSchedule.Ring> rings, MscclProgram program, Communicator comm, long base) {
        int me = comm.rank();
        long region = config.regionBytes();
        int budget = Math.max(2, Math.min(mp.config().queuePairs().sendDepth() / 4,
                mp.requestPoolSize() / (4 * Math.max(1, comm.size()))));
        int[] inSegment = sinceDrain;
        for (StreamSchedule.Ring g : rings) {
            MscclProgram.ThreadBlock tb = program.gpus().get(me).tbs().get(g.tb());
            int slot = (int) ((g.seq() - 1) % config.slots());
            int peer = comm.worldRank(g.ack() ? tb.recv() : tb.send());
            if (inSegment[peer] + 2 > budget) {
                drain();
                java.util.Arrays.fill(inSegment, 0);
            }
            List<MpRequest> puts = new ArrayList<>(2);
            if (g.ack()) {
                nic.post(MemopBatch.of(wait(counters, 24L * g.tb() + 16, base + g.seq(), "rank " + me + " tb "
                        + g.tb() + " consuming message " + g.seq() + " (the NIC stream, to acknowledge it)")));
                int sender = program.tbConnectedTo(tb.recv(), me, tb.chan(), true);
                puts.add(inline(base + g.seq(), peer, region * sender + config.ackOffset()));
            } else {
                nic.post(MemopBatch.of(wait(counters, 24L * g.tb() + 8, base + g.seq(), "rank " + me + " tb "
                        + g.tb() + " filling message " + g.seq() + " (the NIC stream, to send it)")));
                int receiver = program.tbConnectedTo(tb.send(), me, tb.chan(), false);
                long at = region * g.tb() + (long) slot * config.slotBytes();
                puts.add(retry(() -> mp.putPrepare(stage.asSlice(at, g.bytes()), stageReg, peer,
                        region * receiver + (long) slot * config.slotBytes(), window, PutFlags.NOWAIT)));
                puts.add(inline(base + g.seq(), peer, region * receiver + config.flagsOffset() + 8L * slot));
            }
            inSegment[peer] += puts.size();
            mp.iputPostAllOnStream(puts, nic);
        }
    }

    private MpRequest inline(long value, int peer, long displacement) {
        return retry(() -> {
            inlineSource.set(ValueLayout.JAVA_LONG, 0, value);
            return mp.putPrepare(inlineSource, inlineReg, peer, displacement, window,
                    PutFlags.INLINE | PutFlags.NOWAIT);
        });
    }

    /** Prepares, waiting while the queue pair is full of rung puts the NIC has not executed yet. */
    private MpRequest retry(Supplier<MpRequest> prepare) {
        long deadline = System.nanoTime() + config.timeout().toNanos();
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
        while (true) {
            try {
                return prepare.get();
            } catch (QueueFullException e) {
                if (System.nanoTime() > deadline) {
                    throw new CollectiveException("rank " + mp.rank() + ": the NIC did not execute the MSCCL run's "
                            + "puts within " + config.timeout() + ": " + e.getMessage(), e);
                }
                idler.idle();
            }
        }
    }

    /** Waits until the NIC stream has rung everything posted so far (a run longer than the queue pairs). */
    private void drain() {
        Event e = nic.record();
        long deadline = System.nanoTime() + config.timeout().toNanos();
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
        while (!e.isDone()) {
            if (System.nanoTime() > deadline) {
                throw new CollectiveException("rank " + mp.rank() + ": the MSCCL run's NIC stream did not reach the "
                        + "end of its " + "previous segment within " + config.timeout() + (failure() == null ? ""
                        : ": " + failure()), failure());
            }
            idler.idle();
        }
        if (e.failure() != null) {
            throw new CollectiveException("rank " + mp.rank() + ": the MSCCL run's streams failed: " + e.failure(),
                    e.failure());
        }
    }

    private MemorySegment slot(MemorySegment region, long seq) {
        return region.asSlice(((seq - 1) % config.slots()) * config.slotBytes(), config.slotBytes());
    }

    private static Memop wait(MemorySegment m, long offset, long value, String name) {
        return new Memop.Wait64(MemoryWord.word64(m, offset, name), value, WaitCondition.GEQ);
    }

    /** @param which 0 semaphore, 1 ready, 2 consumed */
    private Memop write(int tb, int which, long value) {
        return new Memop.Write64(MemoryWord.word64(counters, 24L * tb + 8L * which, "counter " + which + " of tb "
                + tb), value, true);
    }

    /** Waits for what was enqueued (a failed stream ends its wait), then stops the streams. */
    @Override
    public void close() {
        abortOnJobFailure.close();
        for (HostStream s : all()) {
            try {
                s.synchronize();
            } catch (RuntimeException e) {
                // already failed: its run's error went to the caller's stream
            }
            s.close();
        }
        mp.deregister(inlineReg);
        mp.free(inlineSource);
        mp.free(counters);
    }
}
