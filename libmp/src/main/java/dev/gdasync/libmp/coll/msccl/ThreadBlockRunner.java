package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One thread block of this rank's {@code <gpu>}, as a state machine that never blocks: {@link #advance} runs the
 * next step of the current tile if its dependency, its incoming message and its send slot are ready, and says
 * whether it did. The program runs tile by tile: every step for tile 0, then for tile 1, …
 *
 * <p>Dependencies are semaphores, one 64-bit word per thread block: a step with {@code hasdep} ends with a
 * WRITE64 of {@code tile · steps + s + 1} (release), and a step with {@code depid/deps} starts with a WAIT64 GEQ on
 * the named block's word for {@code tile · steps(depid) + deps + 1}, the memops of gdsync on the host.
 *
 * <p>Receiving: the message with sequence number q lies in slot (q − 1) mod slots of this block's window region,
 * whose flag word the sender sets to q (plus the run's epoch) after the data. Sending: the step fills the staging slot and publishes
 * {@link #ready}; the rank's proxy (the caller's thread, the only one that drives the Mp) puts it. A slot is
 * reused only after the receiver acknowledged the message that used it before ({@link #consumed} on its side).
 */
final class ThreadBlockRunner {
    private final RunPlan plan;
    private final MscclProgram.ThreadBlock tb;
    private final MemoryWord[] semaphores;
    private final MemorySegment recvRegion;
    private final MemoryWord[] recvFlags;
    private final MemoryWord ack;
    private final MemorySegment stage;
    final long[] messageBytes;
    /** Messages filled and ready to put (written by this block, read by the proxy). */
    final AtomicLong ready = new AtomicLong();
    /** Messages received and no longer needed (written by this block, read by the proxy). */
    final AtomicLong consumed = new AtomicLong();
    private final int slots;
    private final long slotBytes;
    /** This run's epoch in the upper 32 bits: flags and acknowledgements are base + a count. */
    private final long base;
    private long recvSeq;
    private long sendSeq;
    private int step;
    private int tile;
    private volatile boolean done;
    private volatile String waitingFor = "not started";

    ThreadBlockRunner(RunPlan plan, MscclProgram.ThreadBlock tb, MemoryWord[] semaphores, MemorySegment recvRegion,
                      MemoryWord[] recvFlags, MemoryWord ack, MemorySegment stage, int slots, long slotBytes,
                      long base) {
        this.base = base;
        this.plan = plan;
        this.tb = tb;
        this.semaphores = semaphores;
        this.recvRegion = recvRegion;
        this.recvFlags = recvFlags;
        this.ack = ack;
        this.stage = stage;
        this.slots = slots;
        this.slotBytes = slotBytes;
        this.messageBytes = new long[slots];
        this.done = tb.steps().isEmpty() || plan.tiles() == 0;
    }

    MscclProgram.ThreadBlock tb() {
        return tb;
    }

    boolean isDone() {
        return done;
    }

    /** @return whether every message it sent was acknowledged: the receiver's slots are free for the next run */
    boolean allAcknowledged() {
        return sendSeq == 0 || WaitCondition.GEQ.test(ack.getAcquire64(), base + sendSeq);
    }

    /** @return where it is and what it waits for, for a timeout's message */
    String position() {
        if (done) {
            return "tb " + tb.id() + (allAcknowledged() ? " finished" : " finished, waits for rank "
                    + plan.commRank(tb.send()) + " to acknowledge message " + sendSeq);
        }
        MscclProgram.Step st = tb.steps().get(step);
        return "tb " + tb.id() + " step " + st.s() + " (" + st.type().xml() + ", tile " + tile + " of "
                + plan.tiles() + ") waits for " + waitingFor;
    }

    /** @return whether a step ran */
    boolean advance() {
        if (done) {
            return false;
        }
        MscclProgram.Step st = tb.steps().get(step);
        if (st.depid() >= 0) {
            long need = (long) tile * plan.steps(st.depid()) + st.deps() + 1;
            if (!WaitCondition.GEQ.test(semaphores[st.depid()].getAcquire64(), need)) {
                waitingFor = "tb " + st.depid() + " step " + st.deps() + " (its semaphore to reach " + need + ")";
                return false;
            }
        }
        boolean receives = st.type().receives();
        boolean sends = st.type().sends();
        long rq = recvSeq + 1;
        long sq = sendSeq + 1;
        if (receives && !WaitCondition.GEQ.test(recvFlags[(int) ((rq - 1) % slots)].getAcquire64(), base + rq)) {
            waitingFor = "message " + rq + " from rank " + plan.commRank(tb.recv()) + " on channel " + tb.chan();
            return false;
        }
        if (sends && sq > slots && !WaitCondition.GEQ.test(ack.getAcquire64(), base + sq - slots)) {
            waitingFor = "a free slot to rank " + plan.commRank(tb.send()) + " on channel " + tb.chan()
                    + " (message " + (sq - slots) + " not yet acknowledged)";
            return false;
        }
        execute(st, receives ? slot(recvRegion, rq) : null, sends ? slot(stage, sq) : null);
        if (receives) {
            recvSeq = rq;
            consumed.setRelease(rq);
        }
        if (sends) {
            messageBytes[(int) ((sq - 1) % slots)] = (long) st.cnt() * plan.tileBytes(tile);
            sendSeq = sq;
            ready.setRelease(sq);
        }
        if (st.hasdep()) {
            semaphores[tb.id()].set64((long) tile * tb.steps().size() + st.s() + 1, true);
        }
        if (++step == tb.steps().size()) {
            step = 0;
            if (++tile == plan.tiles()) {
                done = true;
            }
        }
        return true;
    }

    private MemorySegment slot(MemorySegment region, long seq) {
        return region.asSlice(((seq - 1) % slots) * slotBytes, slotBytes);
    }

    /** Runs one step on tile {@link #tile}. */
    private void execute(MscclProgram.Step st, MemorySegment in, MemorySegment out) {
        StepKernel.execute(plan, st, tile, in, out);
    }
}
