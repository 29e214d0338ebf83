package dev.gdasync.gdsync.mlx5.soft;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.mlx5.Mlx5Layouts;
import dev.gdasync.gdsync.mlx5.Mlx5Opcodes;
import dev.gdasync.gdsync.mlx5.Mlx5QpQueues;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.TrafficCounters;
import dev.gdasync.gdsync.nic.TrafficMeter;
import dev.gdasync.gdsync.trace.DoorbellNoticedEvent;
import dev.gdasync.gdsync.trace.DoorbellRungEvent;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayDeque;

import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE32;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE64;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.DS_BYTES;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.SEND_WQE_BB;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The hardware's part for one software mlx5 queue pair: notices the counters in the doorbell record move, parses
 * the new WQEs (mlx5 format, from the send queue) and receive entries, hands them to a software NIC queue pair that
 * moves the bytes over its transports with its access checks, and turns that queue pair's completions into 64-byte
 * CQEs. Runs on the software NIC's agent thread, and on a thread that rang a doorbell by a call or polls an empty
 * completion queue; a lock makes them take turns, and a thread that finds it taken leaves the work to the holder,
 * which looks at the doorbell record again before it lets go.
 *
 * <p>It counts the doorbells it notices, by whom (the agent, or the thread that rang or polls), and records them with
 * the flight recorder when it is on; the software NIC queue pair under it counts and records the rest.
 */
final class SoftQp {
    private static final VarHandle LOCK;
    private static final VarHandle INT = JAVA_INT.varHandle();
    /** How long a rung WQE may look unwritten (another thread's stores not yet visible) before it counts as malformed. */
    private static final long UNWRITTEN_GRACE_NANOS = 100_000_000L;
    private static final int SIGNALED_BIT = 1 << 16;

    static {
        try {
            LOCK = MethodHandles.lookup().findVarHandle(SoftQp.class, "lock", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Mlx5QpQueues queues;
    private final QueuePair inner;
    private final SoftCq sendCq;
    private final SoftCq recvCq;
    private final Region region;
    private final MemoryRegion scratch;
    private final MemorySegment sq;
    private final long sqBytes;
    private final MemorySegment rq;
    private final int rqMask;
    private final int rqStride;
    private final int maxRecvSge;
    private final MemorySegment dbrec;
    private final int qpn;
    private final SendWorkRequest wr = new SendWorkRequest();
    private final RecvWorkRequest rwr = new RecvWorkRequest();
    private final Completion c = new Completion();
    /** Counts the doorbells this engine noticed. */
    private final TrafficMeter meter;

    @SuppressWarnings("unused")
    private volatile int lock;
    private volatile boolean closed;
    private volatile boolean ringExpected;
    private volatile long eagerUntil = System.nanoTime();
    /** The send counter (basic blocks) of the next WQE to take; under the lock. */
    private int sqConsumed;
    /** The receive counter of the next receive to take; under the lock. */
    private int rqConsumed;
    private long unwrittenSince;
    private boolean failed;
    /** Requests handed to the software NIC queue pair, and their completions reaped: each ends in one completion. */
    private long innerPosted;
    private long innerReaped;
    /** NOPs waiting for every request before them to complete: {WQE counter, innerPosted when taken}. */
    private final ArrayDeque<long[]> nops = new ArrayDeque<>();

    /**
     * @param queues  where the queues live
     * @param inner   the software NIC queue pair that executes the work
     * @param sendCq  the send completion queue's device side
     * @param recvCq  the receive completion queue's device side
     * @param region  the memory of the queues (closed with the queue pair)
     * @param scratch a registered buffer of at least {@code queues.maxInline()} bytes for inline payloads
     */
    SoftQp(Mlx5QpQueues queues, QueuePair inner, SoftCq sendCq, SoftCq recvCq, Region region, MemoryRegion scratch) {
        this.queues = queues;
        this.inner = inner;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.region = region;
        this.scratch = scratch;
        this.sq = queues.sq();
        this.sqBytes = (long) queues.sqWqeCount() * SEND_WQE_BB;
        this.rq = queues.rq();
        this.rqMask = queues.rqWqeCount() - 1;
        this.rqStride = queues.rqStride();
        this.maxRecvSge = queues.maxRecvSge();
        this.dbrec = queues.dbrec();
        this.qpn = queues.qpn();
        this.meter = new TrafficMeter("mlx5 QP " + qpn, 0, false);
    }

    /** @return the doorbells this engine noticed and the RNR retries of the software NIC queue pair under it */
    TrafficCounters counters() {
        TrafficCounters mine = meter.snapshot();
        return new TrafficCounters(0, 0, 0, 0, mine.errors(), inner.counters().rnrRetries(), mine.doorbellsInline(),
                mine.doorbellsAgent(), 0, 0);
    }

    /** Rings by a call (a CPU post, a host executor's doorbell memop): runs the rung work on this thread. */
    void ring() {
        DoorbellRungEvent event = new DoorbellRungEvent();
        if (event.shouldCommit()) {
            event.provider = "mlx5";
            event.queuePair = qpn;
            event.producerIndex = counter(Mlx5QpQueues.SEND_DBR);
            event.commit();
        }
        run(false);
    }

    Mlx5QpQueues queues() {
        return queues;
    }

    QueuePair inner() {
        return inner;
    }

    Region region() {
        return region;
    }

    MemoryRegion scratch() {
        return scratch;
    }

    SoftCq sendCq() {
        return sendCq;
    }

    SoftCq recvCq() {
        return recvCq;
    }

    /** A plain store will move the send counter: poll eagerly until it did. */
    void expectRing() {
        ringExpected = true;
    }

    /** An executor that cannot progress the device waits on one of its CQEs: poll eagerly for a while. */
    void expectCompletion() {
        eagerUntil = System.nanoTime() + SoftEngine.EAGER_AFTER_EXTERNAL_WAIT_NANOS;
    }

    boolean wantsEagerPolling(long now) {
        return ringExpected || now - eagerUntil < 0;
    }

    /**
     * Runs what is rung and reaps what completed, unless another thread is at it.
     *
     * @param byAgent whether the caller is the software NIC's agent (else a thread that rang or polls)
     * @return the work done
     */
    int run(boolean byAgent) {
        int total = 0;
        for (;;) {
            if (closed || !LOCK.compareAndSet(this, 0, 1)) {
                return total;
            }
            int n;
            try {
                n = step(byAgent);
            } finally {
                LOCK.setRelease(this, 0);
            }
            total += n;
            if (n == 0 || !hasRungWork()) {
                return total;
            }
        }
    }

    /**
     * Runs what is rung and reaps what completed, waiting for the thread at it if there is one: a poll that found
     * its CQ empty must see every completion the transports delivered before it looked, so it cannot leave the work
     * to an agent that may be descheduled in the middle of it.
     *
     * @return the work done
     */
    int runNow() {
        for (int spins = 0; !LOCK.compareAndSet(this, 0, 1); spins++) {
            if (closed) {
                return 0;
            }
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        int n;
        try {
            if (closed) {
                return 0;
            }
            n = step(false);
        } finally {
            LOCK.setRelease(this, 0);
        }
        return n + (hasRungWork() ? run(false) : 0);
    }

    /** Stops the engine for good: waits for the thread at work, keeps the lock. */
    void close() {
        closed = true;
        while (!LOCK.compareAndSet(this, 0, 1)) {
            Thread.onSpinWait();
        }
    }

    private boolean hasRungWork() {
        return counter(Mlx5QpQueues.SEND_DBR) != (sqConsumed & 0xffff) || counter(Mlx5QpQueues.RECV_DBR) != (rqConsumed & 0xffff);
    }

    /** @return a big-endian 16-bit counter of the doorbell record */
    private int counter(int word) {
        int raw = (int) INT.getAcquire(dbrec, word * 4L);
        return (ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? Integer.reverseBytes(raw) : raw) & 0xffff;
    }

    private int step(boolean byAgent) {
        int n = sendCq.drainWaiting() + recvCq.drainWaiting();
        n += takeReceives();
        n += noticed(byAgent);
        n += reap();
        return n;
    }

    /** Takes the rung sends, counting and recording the doorbell when there were any. */
    private int noticed(boolean byAgent) {
        DoorbellNoticedEvent event = new DoorbellNoticedEvent();
        event.begin();
        int first = sqConsumed;
        int n = takeSends();
        if (n > 0) {
            meter.doorbell(byAgent);
            if (event.shouldCommit()) {
                event.provider = "mlx5";
                event.queuePair = qpn;
                event.firstRequest = first & 0xffff;
                event.requests = n;
                event.noticedBy = byAgent ? "agent" : "inline";
                event.commit();
            }
        }
        return n;
    }

    // ---- receives ----

    private int takeReceives() {
        int n = 0;
        int rc = counter(Mlx5QpQueues.RECV_DBR);
        while (((rc - rqConsumed) & 0xffff) != 0) {
            long off = (long) (rqConsumed & rqMask) * rqStride;
            rwr.reset().wrId(rqConsumed & 0xffff);
            for (int i = 0; i < maxRecvSge; i++) {
                long s = off + (long) i * DS_BYTES;
                int lkey = rq.get(BE32, s + 4);
                if (lkey == Mlx5Layouts.INVALID_LKEY) {
                    break;
                }
                rwr.sge(rq.get(BE64, s + 8), rq.get(BE32, s), Integer.toUnsignedLong(lkey));
            }
            try {
                inner.postRecv(rwr);
            } catch (QueueFullException e) {
                break; // taken on a later pass
            } catch (IllegalArgumentException | IllegalStateException e) {
                // Hardware reports a receive it cannot use with an error CQE and moves the queue pair to the error state.
                recvCq.writeError(Mlx5Opcodes.CQE_RESP_ERR, rqConsumed & 0xffff, qpn, Mlx5Opcodes.SYNDROME_LOCAL_PROT_ERR,
                        ErrorDetail.RECV_BUFFER_INVALID.code(), 0);
                inner.abort(ErrorDetail.RECV_BUFFER_INVALID);
            }
            rqConsumed++;
            n++;
        }
        return n;
    }

    // ---- sends ----

    private int takeSends() {
        int n = 0;
        int pi = counter(Mlx5QpQueues.SEND_DBR);
        if (pi == (sqConsumed & 0xffff)) {
            ringExpected = false;
            return 0;
        }
        while (!failed && ((pi - sqConsumed) & 0xffff) != 0) {
            long off = (long) sqConsumed * SEND_WQE_BB & (sqBytes - 1);
            int opmodIdxOpcode = sq.get(BE32, off + Mlx5Layouts.CTRL_OPMOD_IDX_OPCODE);
            int qpnDs = sq.get(BE32, off + Mlx5Layouts.CTRL_QPN_DS);
            int index = (opmodIdxOpcode >>> 8) & 0xffff;
            int ds = qpnDs & 0x3f;
            if (index != (sqConsumed & 0xffff) || ds == 0) {
                // Rung by a thread whose WQE stores this one may not see yet; past the grace it is malformed.
                long now = System.nanoTime();
                if (unwrittenSince == 0) {
                    unwrittenSince = now;
                    break;
                }
                if (now - unwrittenSince < UNWRITTEN_GRACE_NANOS) {
                    break;
                }
                failSend(sqConsumed & 0xffff, opmodIdxOpcode & 0xff, ErrorDetail.MALFORMED_REQUEST);
                failed = true;
                break;
            }
            unwrittenSince = 0;
            int bbs = (ds * DS_BYTES + SEND_WQE_BB - 1) / SEND_WQE_BB;
            int mlx5Opcode = opmodIdxOpcode & 0xff;
            if (mlx5Opcode == Mlx5Opcodes.NOP) {
                // Moves nothing; its CQE (if asked for) follows the completions of every request before it.
                int fmCeSe = sq.get(JAVA_BYTE, off + Mlx5Layouts.CTRL_FM_CE_SE) & 0xff;
                if ((fmCeSe & Mlx5Opcodes.CTRL_CQ_UPDATE) != 0) {
                    nops.addLast(new long[] {index, innerPosted});
                }
                sqConsumed += bbs;
                n++;
                continue;
            }
            try {
                decode(off, mlx5Opcode, index, ds);
            } catch (IllegalArgumentException e) {
                failSend(index, mlx5Opcode, ErrorDetail.MALFORMED_REQUEST);
                sqConsumed += bbs;
                n++;
                continue;
            }
            try {
                inner.postSend(wr);
                innerPosted++;
            } catch (QueueFullException e) {
                break; // taken on a later pass, once completions were reaped
            } catch (IllegalArgumentException | IllegalStateException e) {
                failSend(index, mlx5Opcode, refusal(e));
            }
            sqConsumed += bbs;
            n++;
        }
        if (counter(Mlx5QpQueues.SEND_DBR) == (sqConsumed & 0xffff)) {
            ringExpected = false;
        }
        return n;
    }

    /** Fills {@link #wr} from the WQE at {@code off}. */
    private void decode(long off, int mlx5Opcode, int index, int ds) {
        Opcode op = Mlx5Opcodes.toVerbs(mlx5Opcode);
        int fmCeSe = sq.get(JAVA_BYTE, off + Mlx5Layouts.CTRL_FM_CE_SE) & 0xff;
        boolean signaled = (fmCeSe & Mlx5Opcodes.CTRL_CQ_UPDATE) != 0;
        // Every WQE is signaled to the software NIC, so the engine learns when it ran; the CQE is written only when
        // the WQE asked for one, or failed.
        wr.reset().opcode(op).wrId((long) mlx5Opcode << 24 | (signaled ? SIGNALED_BIT : 0) | index)
                .flags(SendFlags.SIGNALED | ((fmCeSe & Mlx5Opcodes.CTRL_FENCE) != 0 ? SendFlags.FENCE : 0));
        if (op.hasImmediate()) {
            wr.immediate(sq.get(BE32.withByteAlignment(1), off + Mlx5Layouts.CTRL_IMM));
        }
        int unit = 1;
        if (op.isRemoteAccess()) {
            long s = segment(off, unit++);
            wr.remote(sq.get(BE64, s), Integer.toUnsignedLong(sq.get(BE32, s + 8)));
        }
        if (op.isAtomic()) {
            long s = segment(off, unit++);
            long swapOrAdd = sq.get(BE64, s);
            long compare = sq.get(BE64, s + 8);
            if (op == Opcode.ATOMIC_CMP_SWAP) {
                wr.swap(swapOrAdd).compareAdd(compare);
            } else {
                wr.compareAdd(swapOrAdd);
            }
        }
        if (unit < ds) {
            long s = segment(off, unit);
            int first = sq.get(BE32, s);
            if ((first & Mlx5Layouts.INLINE_SEG) != 0) {
                int length = first & ~Mlx5Layouts.INLINE_SEG;
                if (length > scratch.length()) {
                    throw new IllegalArgumentException("inline payload of " + length + " bytes");
                }
                MemorySegment dst = scratch.segment();
                long p = s + 4;
                for (int i = 0; i < length; i++) {
                    if (p == sqBytes) {
                        p = 0;
                    }
                    dst.set(JAVA_BYTE, i, sq.get(JAVA_BYTE, p++));
                }
                wr.sge(scratch.address(), length, scratch.lkey()).flags(wr.flags() | SendFlags.INLINE);
            } else {
                for (; unit < ds; unit++) {
                    long d = segment(off, unit);
                    wr.sge(sq.get(BE64, d + 8), sq.get(BE32, d), Integer.toUnsignedLong(sq.get(BE32, d + 4)));
                }
            }
        }
    }

    /** @return the offset of 16-byte unit {@code unit} of the WQE at {@code off}, wrapping at the queue's end */
    private long segment(long off, int unit) {
        return (off + (long) unit * DS_BYTES) & (sqBytes - 1);
    }

    /** A WQE the software NIC refused: what hardware reports, an error CQE, and the queue pair errs. */
    private void failSend(int index, int mlx5Opcode, ErrorDetail detail) {
        int syndrome = detail == ErrorDetail.BAD_LKEY || detail == ErrorDetail.LOCAL_OUT_OF_BOUNDS
                || detail == ErrorDetail.LOCAL_ACCESS_DENIED
                ? Mlx5Opcodes.SYNDROME_LOCAL_PROT_ERR : Mlx5Opcodes.SYNDROME_LOCAL_QP_OP_ERR;
        sendCq.writeError(Mlx5Opcodes.CQE_REQ_ERR, index, qpn, syndrome, detail.code(), mlx5Opcode);
        inner.abort(detail);
    }

    private static ErrorDetail refusal(RuntimeException e) {
        String m = String.valueOf(e.getMessage());
        if (m.contains("lkey") || m.contains("matches no")) {
            return ErrorDetail.BAD_LKEY;
        }
        if (m.contains("outside")) {
            return ErrorDetail.LOCAL_OUT_OF_BOUNDS;
        }
        if (m.contains("LOCAL_WRITE")) {
            return ErrorDetail.LOCAL_ACCESS_DENIED;
        }
        return ErrorDetail.MALFORMED_REQUEST;
    }

    // ---- completions ----

    private int reap() {
        int n = 0;
        while (inner.sendCq().poll(c) == 1) {
            innerReaped++;
            long id = c.wrId();
            int index = (int) (id & 0xffff);
            int mlx5Opcode = (int) (id >>> 24) & 0xff;
            if (c.isSuccess()) {
                if ((id & SIGNALED_BIT) != 0) {
                    sendCq.write(Mlx5Opcodes.CQE_REQ, index, qpn, c.byteLength(), 0);
                }
            } else {
                sendCq.writeError(Mlx5Opcodes.CQE_REQ_ERR, index, qpn, Mlx5Opcodes.syndrome(c.status()), c.detail().code(),
                        mlx5Opcode);
            }
            n++;
        }
        while (!nops.isEmpty() && innerReaped >= nops.peekFirst()[1]) {
            sendCq.write(Mlx5Opcodes.CQE_REQ, (int) nops.pollFirst()[0], qpn, 0, 0);
            n++;
        }
        while (inner.recvCq().poll(c) == 1) {
            int index = (int) (c.wrId() & 0xffff);
            if (c.isSuccess()) {
                int opcode = c.opcode() == CompletionOpcode.RECV_RDMA_WITH_IMM ? Mlx5Opcodes.CQE_RESP_WR_IMM
                        : c.hasImmediate() ? Mlx5Opcodes.CQE_RESP_SEND_IMM : Mlx5Opcodes.CQE_RESP_SEND;
                recvCq.write(opcode, index, qpn, c.byteLength(), c.immediate());
            } else {
                recvCq.writeError(Mlx5Opcodes.CQE_RESP_ERR, index, qpn, Mlx5Opcodes.syndrome(c.status()), c.detail().code(), 0);
            }
            n++;
        }
        return n;
    }

    /** @return whether the software NIC queue pair is still usable */
    boolean isLive() {
        return inner.state() != QpState.CLOSED && !closed;
    }

    @Override
    public String toString() {
        return "SoftQp{" + qpn + ", sq " + sqConsumed + ", rq " + rqConsumed + ", " + inner + "}";
    }
}
