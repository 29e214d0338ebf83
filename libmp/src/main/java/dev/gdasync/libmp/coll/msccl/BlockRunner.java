package dev.gdasync.libmp.coll.msccl;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One thread block of this rank's {@code <gpu>} in blocking runs, as a state machine that never waits:
 * {@link #advance} runs the next step of the current tile if its dependency, its incoming message and its outgoing
 * slot are ready, and says whether it did. The program runs tile by tile: every step for tile 0, then tile 1, …
 * Made once per kind of call and reused by every run of it ({@link #begin} rebinds the buffers).
 *
 * <p>Dependencies are semaphores, one 64-bit value per thread block of the rank: a step with {@code hasdep} ends by
 * storing {@code tile · steps + s + 1} (release), a step with {@code depid/deps} starts only when the named block's
 * value reached {@code tile · steps(depid) + deps + 1} (acquire). Plain memory of this process: the blocks of a rank
 * run on one thread by default, or on threads of their own ({@link MscclConfig#threads}).
 *
 * <p>Messages go through the block's {@link SendLink} and {@link RecvLink}; a message that
 * {@link DirectPlacement} lets land directly is written into the receiver's buffer, and its receive step finds it
 * there.
 */
final class BlockRunner {
    private static final VarHandle SEM = MethodHandles.arrayElementVarHandle(long[].class);
    private static final Buffer[] BUFFERS = Buffer.values();
    private static final int NONE = 0;
    private static final int DEP = 1;
    private static final int RECV = 2;
    private static final int SEND = 3;

    private final MscclProgram.ThreadBlock tb;
    private final MscclProgram.Step[] steps;
    /** Steps of each thread block of the rank: a dependency's semaphore value counts them per tile. */
    private final int[] stepsOf;
    private final long[] semaphores;
    private final SendLink send;
    private final RecvLink recv;
    /** Per step: whether its message is already in its destination when it arrives. */
    private final boolean[] receivesDirect;
    /** Per step: the receiver's buffer and chunk its message lands in directly, or null (a slot). */
    private final int[][] sendsDirect;
    /** Whether, in every call, a step of the receiver finishes before a step of this rank starts. */
    private final boolean receiverStarted;
    private RunPlan plan;
    private int step;
    private int tile;
    private long recvSeq;
    private long sendSeq;
    private int waiting;
    private volatile boolean done;

    /**
     * @param semaphores one value per thread block of the rank, shared by its runners
     * @param send       the block's send connection, or null
     * @param recv       the block's receive connection, or null
     * @param placement  which of its messages land directly, or null for none
     * @param order      the program's order (which ranks precede which), or null if unknown
     */
    BlockRunner(MscclProgram program, int rank, MscclProgram.ThreadBlock tb, long[] semaphores, SendLink send,
                RecvLink recv, DirectPlacement placement, DirectPlacement order) {
        this.tb = tb;
        this.steps = tb.steps().toArray(new MscclProgram.Step[0]);
        MscclProgram.Gpu gpu = program.gpus().get(rank);
        this.stepsOf = new int[gpu.tbs().size()];
        for (int t = 0; t < stepsOf.length; t++) {
            stepsOf[t] = gpu.tbs().get(t).steps().size();
        }
        this.semaphores = semaphores;
        this.send = send;
        this.recv = recv;
        this.receivesDirect = new boolean[steps.length];
        this.sendsDirect = new int[steps.length][];
        if (placement != null) {
            for (int s = 0; s < steps.length; s++) {
                receivesDirect[s] = steps[s].type().receives() && placement.landsDirectly(rank, tb.id(), s);
                sendsDirect[s] = steps[s].type().sends() ? placement.directTarget(rank, tb.id(), s) : null;
            }
        }
        this.receiverStarted = order != null && send != null && order.precedes(send.peer, rank);
        this.done = true;
    }

    MscclProgram.ThreadBlock tb() {
        return tb;
    }

    SendLink sendLink() {
        return send;
    }

    RecvLink recvLink() {
        return recv;
    }

    /**
     * Starts a run over {@code plan}'s buffers.
     *
     * @param chained whether the previous call on the communicator was a run of this same kind, which this rank
     *                finished (what the program orders then tells that some receivers finished the call before)
     */
    void begin(RunPlan plan, boolean chained) {
        this.plan = plan;
        step = 0;
        tile = 0;
        recvSeq = 0;
        sendSeq = 0;
        waiting = NONE;
        if (send != null) {
            send.begin(chained && receiverStarted);
        }
        if (recv != null) {
            recv.begin();
        }
        done = steps.length == 0 || plan.tiles() == 0;
    }

    /** @return whether it ran every step of every tile */
    boolean isDone() {
        return done;
    }

    /** @return whether it is done and its connections drained: the run may end for it */
    boolean isFinished() {
        return done && (send == null || send.drained()) && (recv == null || recv.drained());
    }

    /** @return whether it waits for another block of this rank (a dependency), not for a peer */
    boolean waitsForDependency() {
        return !done && waiting == DEP;
    }

    /** @return the peer it waits for (a message or a free slot), or -1 */
    int awaitedPeer() {
        if (done) {
            return send != null && !send.drained() ? send.peer : -1;
        }
        return waiting == RECV ? recv.peer : waiting == SEND ? send.peer : -1;
    }

    /**
     * Looks again at what it waits for from a peer, without running anything (called after the peer's header was
     * read: what the peer did before it is visible now).
     *
     * @return whether it still waits
     */
    boolean stillWaitsForPeer() {
        if (done) {
            return send != null && !send.drained();
        }
        return switch (waiting) {
            case RECV -> !recv.arrived(recvSeq + 1);
            case SEND -> !send.ready(sendSeq + 1, sendsDirect[step] != null);
            default -> false;
        };
    }

    /**
     * Runs the next step if it is ready.
     *
     * @return whether a step ran
     * @throws MscclRunException if a connection found a peer in another call
     */
    boolean advance() {
        if (done) {
            return false;
        }
        MscclProgram.Step st = steps[step];
        int dep = st.depid();
        if (dep >= 0 && (long) SEM.getAcquire(semaphores, dep) < (long) tile * stepsOf[dep] + st.deps() + 1) {
            waiting = DEP;
            return false;
        }
        StepType type = st.type();
        boolean receives = type.receives();
        boolean sends = type.sends();
        long rq = recvSeq + 1;
        long sq = sendSeq + 1;
        if (receives && !recv.arrived(rq)) {
            waiting = RECV;
            return false;
        }
        int[] target = sends ? sendsDirect[step] : null;
        if (sends && !send.ready(sq, target != null)) {
            waiting = SEND;
            return false;
        }
        long len = plan.tileBytes(tile);
        MemorySegment in = null;
        long inOff = 0;
        if (receives && !receivesDirect[step]) {
            in = recv.slots();
            inOff = recv.slotOffset(rq);
        }
        MemorySegment out = null;
        long outOff = 0;
        long outStride = len;
        if (sends) {
            if (target != null) {
                Buffer b = BUFFERS[target[0]];
                out = send.peerBuffer(plan.baseIsOutput(b));
                outOff = plan.offset(b, target[1], tile, send.peer);
                outStride = plan.chunkBytes();
            } else {
                out = send.slots();
                outOff = send.slotOffset(sq);
            }
        }
        StepKernel.execute(plan, st, tile, in, inOff, len, out, outOff, outStride);
        if (receives) {
            recvSeq = rq;
            recv.consumed(rq);
        }
        if (sends) {
            sendSeq = sq;
            send.publish(sq, st.cnt() * len);
        }
        if (st.hasdep()) {
            SEM.setRelease(semaphores, tb.id(), (long) tile * steps.length + st.s() + 1);
        }
        waiting = NONE;
        if (++step == steps.length) {
            step = 0;
            if (++tile == plan.tiles()) {
                done = true;
            }
        }
        return true;
    }

    /** @return where it is and what it waits for, for a failure's message */
    String position() {
        if (done) {
            if (send != null && !send.drained()) {
                return "tb " + tb.id() + " finished, waits for " + send.waitingFor(sendSeq + 1, false);
            }
            return "tb " + tb.id() + " finished";
        }
        MscclProgram.Step st = steps[step];
        String what = switch (waiting) {
            case DEP -> "tb " + st.depid() + " step " + st.deps() + " (its semaphore to reach "
                    + ((long) tile * stepsOf[st.depid()] + st.deps() + 1) + ")";
            case RECV -> recv.waitingFor(recvSeq + 1);
            case SEND -> send.waitingFor(sendSeq + 1, sendsDirect[step] != null);
            default -> "nothing (it was running)";
        };
        return "tb " + tb.id() + " step " + st.s() + " (" + st.type().xml() + ", tile " + tile + " of " + plan.tiles()
                + ") waits for " + what;
    }
}
