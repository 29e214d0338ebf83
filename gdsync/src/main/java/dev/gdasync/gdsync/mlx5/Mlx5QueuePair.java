package dev.gdasync.gdsync.mlx5;

// Why this file is long: it is the mlx5 queue pair's verbs surface (prepare, post, ring, receive, reap, fail) over one
// set of WQE and counter fields; splitting it would pass that state between classes on every hot call.

import dev.gdasync.gdsync.memop.Doorbell;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.ScatterGatherList;
import dev.gdasync.gdsync.nic.SendExecutor;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.TrafficCounters;
import dev.gdasync.gdsync.nic.TrafficMeter;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.nic.WqeTemplate;
import dev.gdasync.gdsync.trace.FailureEvent;
import dev.gdasync.gdsync.trace.TraceEvents;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE32;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE64;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.DS_BYTES;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.SEND_WQE_BB;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * An RC queue pair of the mlx5 provider. The CPU writes each send as an mlx5 WQE into the send queue when it is
 * prepared; ringing it is LibGDSync's pair of stores, whoever makes them (the CPU, a stream, a kernel): the new
 * send counter, big-endian, to the doorbell record, then (after a system barrier) the WQE control segment's first
 * 8 bytes to the BlueFlame register. Receives are scatter lists in the receive queue, announced by the receive
 * counter in the doorbell record. Completions are 64-byte CQEs ({@link Mlx5CompletionQueue}).
 *
 * <p>The send counter counts 64-byte basic blocks, and a WQE may take several; a requester CQE names the first basic
 * block of the signaled WQE it completes, which also completes every unsignaled WQE before it. Like the software
 * NIC's queue pairs, this one is used by one CPU thread at a time.
 *
 * <p>Its counts ({@link #counters()}) are taken where the CPU reaps completions: a requester CQE completes the
 * requests up to the one it names, a responder CQE one receive. Doorbells and RNR retries are the device's to count
 * ({@link Mlx5Device#counters}): a ConnectX NIC's are not visible here.
 */
final class Mlx5QueuePair implements QueuePair {
    static {
        // The event classes' first use is slow: paid here, not in the first ring (TraceEvents).
        TraceEvents.preload();
    }

    private final Mlx5Nic nic;
    private final Mlx5Device device;
    private final QueuePairConfig config;
    private final Mlx5QpQueues queues;
    private final int qpn;
    private final Mlx5CompletionQueue sendCq;
    private final Mlx5CompletionQueue recvCq;
    private final Mlx5WqeWriter writer;
    private final MemorySegment sq;
    private final int sqBbs;
    private final MemorySegment rq;
    private final int rqStride;
    private final int rqMask;
    private final MemoryWord sendDbrec;
    private final MemoryWord recvDbrec;
    private final MemoryWord blueFlame;
    private final Doorbell doorbellCall;
    /** Inline payloads gathered from several buffers. */
    private final MemorySegment inlineScratch = MemorySegment.ofArray(new byte[Mlx5Nic.MAX_INLINE]);

    // Per request, by sequence & reqMask.
    private final int reqMask;
    private final int[] reqPi;
    private final byte[] reqBbs;
    private final long[] reqWrId;
    private final byte[] reqOpcode;
    private final int[] reqBytes;
    private final boolean[] reqSignaled;
    /** Whether the provider signaled the request itself, so that the unsignaled ones before it are known complete. */
    private final boolean[] reqOwn;
    private final int[] reqRunBefore;
    /** Where the k-th signaled request's CQE lies in the send CQ's ring, by k & (sendCqDepth - 1). */
    private final long[] ringOfSignaled;
    /** Every how many unsignaled requests in a row the provider signals one itself. */
    private final int ownSignalEvery;
    /** The request whose WQE starts at each basic block. */
    private final long[] seqAtBb;
    private final long[] recvWrId;

    // CPU thread.
    private long sqProduced;
    private long sqPosted;
    /** The send counter (basic blocks) after the last prepared WQE. */
    private int pi;
    /** The send counter after the last posted WQE. */
    private int piPosted;
    private long signaledPrepared;
    /** Requests the provider signaled itself. */
    private long ownPrepared;
    /** Unsignaled requests since the last signaled one. */
    private int unsignaledRun;
    /** The last request whose WQE asks for a CQE (signaled, or signaled by the provider), or -1. */
    private long lastCqeSeq = -1;
    private SendExecutor boundExecutor;
    /** Requests known complete: a CQE named them or a later one. Written by the polling thread. */
    private volatile long completedThrough;
    private int piCompleted;
    private long rqPosted;
    private long rqCompleted;

    private volatile QpState state = QpState.RESET;
    private volatile ErrorDetail errorDetail = ErrorDetail.NONE;
    /** Why the queue pair was aborted; the flush completions that follow carry it. */
    private volatile ErrorDetail abortReason;
    private Endpoint endpoint;
    private final TrafficMeter meter;

    Mlx5QueuePair(Mlx5Nic nic, QueuePairConfig config, Mlx5QpQueues queues, Mlx5CqQueues sendCqQueues,
                  Mlx5CqQueues recvCqQueues) {
        this.nic = nic;
        this.device = nic.device();
        this.config = config;
        this.queues = queues;
        this.qpn = queues.qpn();
        if (queues.rqWqeCount() < config.recvDepth()) {
            throw new IllegalStateException(device.name() + " made a receive queue of " + queues.rqWqeCount()
                    + " entries for " + config.recvDepth() + " receives");
        }
        this.sq = queues.sq();
        this.sqBbs = queues.sqWqeCount();
        this.writer = new Mlx5WqeWriter(sq, sqBbs);
        this.rq = queues.rq();
        this.rqStride = queues.rqStride();
        this.rqMask = queues.rqWqeCount() - 1;
        MemorySegment dbrec = queues.dbrec();
        this.recvDbrec = MemoryWord.word32(dbrec, Mlx5QpQueues.RECV_DBR * 4L, "receive doorbell record of QP " + qpn);
        this.sendDbrec = MemoryWord.word32(dbrec, Mlx5QpQueues.SEND_DBR * 4L, "send doorbell record of QP " + qpn);
        this.blueFlame = MemoryWord.word64(queues.blueFlame(), 0, "BlueFlame register of QP " + qpn);
        this.doorbellCall = device.doorbell(queues);
        this.reqMask = config.sendDepth() - 1;
        this.reqPi = new int[config.sendDepth()];
        this.reqBbs = new byte[config.sendDepth()];
        this.reqWrId = new long[config.sendDepth()];
        this.reqOpcode = new byte[config.sendDepth()];
        this.reqBytes = new int[config.sendDepth()];
        this.reqSignaled = new boolean[config.sendDepth()];
        this.reqOwn = new boolean[config.sendDepth()];
        this.reqRunBefore = new int[config.sendDepth()];
        this.ringOfSignaled = new long[config.sendCqDepth()];
        this.ownSignalEvery = Math.max(1, config.sendDepth() / 4);
        this.seqAtBb = new long[sqBbs];
        this.recvWrId = new long[queues.rqWqeCount()];
        Region sendRelease = device.allocateHost(4L * sendCqQueues.cqeCount());
        Region recvRelease = device.allocateHost(4L * recvCqQueues.cqeCount());
        CqWaitMode mode = nic.cqWait();
        this.meter = new TrafficMeter("QP " + qpn, 0, false);
        this.sendCq = new Mlx5CompletionQueue("send CQ of QP " + qpn, sendCqQueues, sendRelease, mode,
                device.cqProgress(sendCqQueues), () -> signaledPrepared, "signaled sends prepared");
        this.recvCq = new Mlx5CompletionQueue("recv CQ of QP " + qpn, recvCqQueues, recvRelease, mode,
                device.cqProgress(recvCqQueues), () -> rqPosted, "receives posted");
        sendCq.identify(qpn, false, meter.sendWaits());
        recvCq.identify(qpn, true, meter.recvWaits());
        sendCq.reader(new Mlx5CompletionQueue.CqeReader() {
            @Override
            public boolean isOwn(MemorySegment cq, long off) {
                return isOwnCqe(cq, off);
            }

            @Override
            public void read(MemorySegment cq, long off, long index, Completion out) {
                readSendCqe(cq, off, index, out);
            }
        });
        sendCq.ringIndexOf(k -> ringOfSignaled[(int) (k & (ringOfSignaled.length - 1))]);
        sendCq.expectExternalWait(() -> device.expectCompletion(sendCqQueues));
        recvCq.expectExternalWait(() -> device.expectCompletion(recvCqQueues));
        recvCq.reader(new Mlx5CompletionQueue.CqeReader() {
            @Override
            public boolean isOwn(MemorySegment cq, long off) {
                return false;
            }

            @Override
            public void read(MemorySegment cq, long off, long index, Completion out) {
                readRecvCqe(cq, off, index, out);
            }
        });
    }

    @Override
    public int number() {
        return qpn;
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public ErrorDetail errorDetail() {
        return errorDetail;
    }

    @Override
    public QueuePairConfig config() {
        return config;
    }

    @Override
    public synchronized Endpoint endpoint() {
        requireNotClosed();
        if (endpoint == null) {
            endpoint = device.endpoint(queues);
        }
        return endpoint;
    }

    @Override
    public synchronized void connect(Endpoint remote) {
        Objects.requireNonNull(remote, "remote");
        if (state != QpState.RESET) {
            throw new IllegalStateException("queue pair " + qpn + " is " + state + ": only a new queue pair can be connected");
        }
        device.connect(queues, remote);
        state = QpState.READY;
    }

    @Override
    public CompletionQueue sendCq() {
        return sendCq;
    }

    @Override
    public CompletionQueue recvCq() {
        return recvCq;
    }

    // ---- receives ----

    @Override
    public void postRecv(RecvWorkRequest wr) {
        Objects.requireNonNull(wr, "wr");
        requireNotClosed();
        ScatterGatherList sgl = wr.sgl();
        int maxSge = queues.maxRecvSge();
        if (sgl.count() > maxSge) {
            throw new IllegalArgumentException("a receive of QP " + qpn + " takes at most " + maxSge + " buffers, got " + sgl.count());
        }
        for (int i = 0; i < sgl.count(); i++) {
            Mlx5MemoryRegion mr = nic.localBuffer(sgl.lkey(i), sgl.address(i), sgl.length(i), "receive sge " + i);
            if ((mr.access() & Access.LOCAL_WRITE) == 0) {
                throw new IllegalArgumentException("receive sge " + i + ": " + mr + " lacks LOCAL_WRITE");
            }
        }
        sgl.totalLength();
        if (rqPosted - rqCompleted >= config.recvDepth()) {
            throw new QueueFullException("receive queue of QP " + qpn + " is full: " + config.recvDepth()
                    + " receives posted and not completed");
        }
        int slot = (int) (rqPosted & rqMask);
        long off = (long) slot * rqStride;
        int seg = 0;
        for (int i = 0; i < sgl.count(); i++) {
            if (sgl.length(i) == 0) {
                continue; // a byte count of 0 means 2 GiB to an mlx5 NIC
            }
            writeDataSeg(rq, off + (long) seg * DS_BYTES, sgl.length(i), (int) sgl.lkey(i), sgl.address(i));
            seg++;
        }
        if (seg < maxSge) {
            writeDataSeg(rq, off + (long) seg * DS_BYTES, 0, Mlx5Layouts.INVALID_LKEY, 0);
        }
        recvWrId[slot] = wr.wrId();
        rqPosted++;
        recvDbrec.set32(Mlx5Rings.doorbellRecordValue((int) rqPosted), true);
        if (doorbellCall != null) {
            doorbellCall.ring();
        }
    }

    private static void writeDataSeg(MemorySegment s, long off, int length, int lkey, long address) {
        s.set(BE32, off, length);
        s.set(BE32, off + 4, lkey);
        s.set(BE64, off + 8, address);
    }

    // ---- sends ----

    @Override
    public boolean holdsUnrungSends() {
        return sqPosted != sqProduced || !allPostedRung();
    }

    @Override
    public void postSend(SendWorkRequest wr) {
        Objects.requireNonNull(wr, "wr");
        requireSendable();
        if (sqPosted != sqProduced) {
            throw new IllegalStateException("queue pair " + qpn + " has " + (sqProduced - sqPosted)
                    + " prepared sends not yet posted; a CPU post would ring them out of prepare order");
        }
        if (!allPostedRung()) {
            throw new IllegalStateException("queue pair " + qpn + " has sends posted to " + boundExecutor
                    + " that it has not rung yet; a CPU post would ring them early");
        }
        Mlx5SendRequest r = prepare(wr);
        sendDbrec.set32(r.doorbellRecordValue(), true);
        blueFlame.set64(r.doorbellValue(), true);
        r.markPosted(SendExecutor.CPU);
        if (doorbellCall != null) {
            doorbellCall.ring();
        }
    }

    @Override
    public SendRequest prepareSend(SendWorkRequest wr) {
        Objects.requireNonNull(wr, "wr");
        requireSendable();
        return prepare(wr);
    }

    private Mlx5SendRequest prepare(SendWorkRequest wr) {
        int units = checkSend(wr);
        int bbs = (units * DS_BYTES + SEND_WQE_BB - 1) / SEND_WQE_BB;
        boolean signaled = wr.signaled();
        // Selective signaling: an unsignaled request is known complete only once a later CQE names it, so every
        // ownSignalEvery-th unsignaled request in a row asks for a CQE that the CPU consumes silently.
        boolean own = !signaled && unsignaledRun + 1 >= ownSignalEvery;
        checkSpace(signaled || own, bbs);
        long seq = sqProduced;
        int start = pi;
        int written = writeWqe(wr, start, signaled || own);
        if (written != bbs) {
            throw new IllegalStateException("WQE of " + wr + " took " + written + " basic blocks, " + bbs + " were reserved");
        }
        int r = (int) (seq & reqMask);
        reqPi[r] = start;
        reqBbs[r] = (byte) bbs;
        reqWrId[r] = wr.wrId();
        reqOpcode[r] = (byte) Mlx5Opcodes.of(wr.opcode());
        reqBytes[r] = wr.sgl().totalLength();
        reqSignaled[r] = signaled;
        reqOwn[r] = own;
        reqRunBefore[r] = unsignaledRun;
        seqAtBb[start & (sqBbs - 1)] = seq;
        pi = start + bbs;
        sqProduced = seq + 1;
        if (signaled) {
            ringOfSignaled[(int) (signaledPrepared & (ringOfSignaled.length - 1))] = signaledPrepared + ownPrepared;
            signaledPrepared++;
            unsignaledRun = 0;
            lastCqeSeq = seq;
        } else if (own) {
            ownPrepared++;
            unsignaledRun = 0;
            lastCqeSeq = seq;
        } else {
            unsignaledRun++;
        }
        // The control segment's first 8 bytes as they lie in memory: the 64-bit store writes the same bytes.
        long ctrl = sq.get(JAVA_LONG, writer.offsetOf(start));
        MemopBatch ring = Mlx5Rings.send(sendDbrec, pi, blueFlame, ctrl, doorbellCall);
        return new Mlx5SendRequest(this, seq, ring, signaled);
    }

    /**
     * Checks a send completely; nothing is written.
     *
     * @return the 16-byte units its WQE takes
     */
    private int checkSend(SendWorkRequest wr) {
        Opcode op = wr.opcode();
        int flags = wr.flags();
        if ((flags & ~SendFlags.ALL) != 0) {
            throw new IllegalArgumentException("unknown send flags 0x" + Integer.toHexString(flags & ~SendFlags.ALL));
        }
        ScatterGatherList sgl = wr.sgl();
        int length = sgl.totalLength();
        boolean inline = (flags & SendFlags.INLINE) != 0;
        if (inline) {
            if (op != Opcode.SEND && op != Opcode.SEND_WITH_IMM && op != Opcode.RDMA_WRITE && op != Opcode.RDMA_WRITE_WITH_IMM) {
                throw new IllegalArgumentException("INLINE applies to SEND and RDMA_WRITE, not " + op);
            }
            if (length > queues.maxInline() || length > Mlx5Nic.MAX_INLINE) {
                throw new IllegalArgumentException("INLINE payload of " + length + " bytes exceeds the inline limit of "
                        + Math.min(queues.maxInline(), Mlx5Nic.MAX_INLINE) + " bytes");
            }
        }
        if (op.isRemoteAccess() && (wr.rkey() >>> 32) != 0) {
            throw new IllegalArgumentException(op + ": rkey 0x" + Long.toHexString(wr.rkey()) + " is not an mlx5 key (32 bits)");
        }
        if (op.isAtomic()) {
            if (sgl.count() != 1 || sgl.length(0) != 8) {
                throw new IllegalArgumentException(op + " needs exactly one 8-byte local buffer for the original value, got "
                        + sgl.count() + " buffers of " + length + " bytes");
            }
            if ((wr.remoteAddress() & 7) != 0) {
                throw new IllegalArgumentException(op + " remote address 0x" + Long.toHexString(wr.remoteAddress())
                        + " is not 8-byte aligned");
            }
        }
        int dataSegs = 0;
        for (int i = 0; i < sgl.count(); i++) {
            Mlx5MemoryRegion mr = nic.localBuffer(sgl.lkey(i), sgl.address(i), sgl.length(i), "send sge " + i);
            if (op.writesLocal() && (mr.access() & Access.LOCAL_WRITE) == 0) {
                throw new IllegalArgumentException("send sge " + i + ": " + op + " writes the local buffer but " + mr
                        + " lacks LOCAL_WRITE");
            }
            if (inline && mr.isDevice()) {
                throw new IllegalArgumentException("send sge " + i + ": INLINE copies the payload into the send queue with "
                        + "the CPU at post time, and " + mr + " is GPU memory the CPU cannot read: post without INLINE");
            }
            if (sgl.length(i) > 0) {
                dataSegs++;
            }
        }
        int units = 1;
        if (op.isRemoteAccess()) {
            units++;
        }
        if (op.isAtomic()) {
            units++;
        }
        units += inline ? (4 + length + DS_BYTES - 1) / DS_BYTES : dataSegs;
        return units;
    }

    /** Writes a checked send's WQE at send counter {@code start}. @return the basic blocks it took */
    private int writeWqe(SendWorkRequest wr, int start, boolean completion) {
        Opcode op = wr.opcode();
        ScatterGatherList sgl = wr.sgl();
        writer.begin(start);
        if (op.isRemoteAccess()) {
            writer.raddr(wr.remoteAddress(), (int) wr.rkey());
        }
        if (op == Opcode.ATOMIC_CMP_SWAP) {
            writer.atomic(wr.swap(), wr.compareAdd());
        } else if (op == Opcode.ATOMIC_FETCH_ADD) {
            writer.atomic(wr.compareAdd(), 0);
        }
        if ((wr.flags() & SendFlags.INLINE) != 0) {
            int length = 0;
            for (int i = 0; i < sgl.count(); i++) {
                Mlx5MemoryRegion mr = nic.localBuffer(sgl.lkey(i), sgl.address(i), sgl.length(i), "send sge " + i);
                MemorySegment.copy(mr.segment(), sgl.address(i) - mr.address(), inlineScratch, length, sgl.length(i));
                length += sgl.length(i);
            }
            writer.inline(inlineScratch, 0, length);
        } else {
            for (int i = 0; i < sgl.count(); i++) {
                if (sgl.length(i) > 0) {
                    writer.data(sgl.length(i), (int) sgl.lkey(i), sgl.address(i));
                }
            }
        }
        int fmCeSe = (completion ? Mlx5Opcodes.CTRL_CQ_UPDATE : 0)
                | ((wr.flags() & SendFlags.FENCE) != 0 ? Mlx5Opcodes.CTRL_FENCE : 0);
        return writer.finish(Mlx5Opcodes.of(op), start, qpn, fmCeSe, op.hasImmediate() ? wr.immediate() : 0);
    }

    private void checkSpace(boolean completion, int bbs) {
        long done = completedThrough;
        if (sqProduced - done >= config.sendDepth()) {
            throw new QueueFullException("send queue of QP " + qpn + " is full: " + config.sendDepth()
                    + " requests not known complete (an unsignaled request is known complete once a later signaled one"
                    + " completes; prepared requests wait for their executor to ring them)");
        }
        if (pi + bbs - piCompleted > sqBbs) {
            throw new QueueFullException("send queue of QP " + qpn + " is full: " + (pi - piCompleted) + " of its " + sqBbs
                    + " basic blocks hold WQEs not known complete");
        }
        // One entry stays free for the error completion of an unsignaled request.
        long outstanding = signaledPrepared + ownPrepared - sendCq.consumed();
        if (completion && outstanding >= config.sendCqDepth() - 1) {
            throw new QueueFullException("send CQ of QP " + qpn + " is full: " + outstanding
                    + " signaled completions not yet reaped: poll the send CQ first");
        }
    }

    private boolean allPostedRung() {
        return sendDbrec.getAcquire32() == Mlx5Rings.doorbellRecordValue(piPosted);
    }

    @Override
    public WaitRequest prepareWaitCq(CompletionQueue cq) {
        Objects.requireNonNull(cq, "cq");
        if (cq != sendCq && cq != recvCq) {
            throw new IllegalArgumentException(cq.name() + " is not a completion queue of queue pair " + qpn);
        }
        return cq.prepareWait();
    }

    @Override
    public int sendQueueFree() {
        return (int) Math.min(config.sendDepth() - (sqProduced - completedThrough), sqBbs - (pi - piCompleted));
    }

    @Override
    public int recvQueueFree() {
        return (int) (config.recvDepth() - (rqPosted - rqCompleted));
    }

    // ---- post order (through Mlx5SendRequest) ----

    void checkPostOrder(Mlx5SendRequest r, int earlierInBatch, SendExecutor executor) {
        long next = sqPosted + earlierInBatch;
        if (r.sequence() != next) {
            throw new IllegalStateException("send request #" + r.sequence() + " of QP " + qpn
                    + " posted out of prepare order: request #" + next + " must be posted first");
        }
        if (boundExecutor != null && boundExecutor != executor && !allPostedRung()) {
            throw new IllegalStateException("queue pair " + qpn + " has sends posted to " + boundExecutor
                    + " that are not rung yet; post request #" + r.sequence() + " to the same executor, or after they ran");
        }
    }

    void posted(long sequence, SendExecutor executor) {
        int r = (int) (sequence & reqMask);
        piPosted = reqPi[r] + reqBbs[r];
        sqPosted = sequence + 1;
        boundExecutor = executor;
    }

    void cancelPrepared(long sequence, boolean signaled) {
        if (sqProduced != sequence + 1 || sqPosted != sequence) {
            throw new IllegalStateException("send request #" + sequence + " of QP " + qpn + " cannot be cancelled: "
                    + (sqPosted > sequence ? "it was posted" : "request #" + (sqProduced - 1) + " was prepared after it"));
        }
        // Not rung, so no device looks at it: the send counter stays at or below the posted one.
        int r = (int) (sequence & reqMask);
        pi = reqPi[r];
        sqProduced = sequence;
        if (signaled) {
            signaledPrepared--;
        } else if (reqOwn[r]) {
            ownPrepared--;
        }
        unsignaledRun = reqRunBefore[r];
    }

    /**
     * Whether request {@code sequence} is known complete. An unsignaled request is, once a later CQE names a request
     * after it; when no request after it asks for one, the CPU rings a NOP that does (if every prepared send is
     * posted and rung, so the NOP takes its place in order), and the request is known complete once its CQE is
     * reaped.
     */
    boolean isExecuted(long sequence) {
        if (completedThrough > sequence) {
            return true;
        }
        if (lastCqeSeq < sequence && sequence < sqProduced && state == QpState.READY && sqPosted == sqProduced
                && allPostedRung()) {
            ringOwnNop();
        }
        return false;
    }

    /** Rings a NOP WQE that asks for a CQE, which the CPU consumes silently. */
    private void ringOwnNop() {
        try {
            checkSpace(true, 1);
        } catch (QueueFullException e) {
            return; // a later look retries, once completions freed room
        }
        long seq = sqProduced;
        int start = pi;
        writer.begin(start);
        int bbs = writer.finish(Mlx5Opcodes.NOP, start, qpn, Mlx5Opcodes.CTRL_CQ_UPDATE, 0);
        int r = (int) (seq & reqMask);
        reqPi[r] = start;
        reqBbs[r] = (byte) bbs;
        reqWrId[r] = 0;
        reqOpcode[r] = (byte) Mlx5Opcodes.NOP;
        reqBytes[r] = 0;
        reqSignaled[r] = false;
        reqOwn[r] = true;
        reqRunBefore[r] = unsignaledRun;
        seqAtBb[start & (sqBbs - 1)] = seq;
        pi = start + bbs;
        sqProduced = seq + 1;
        ownPrepared++;
        unsignaledRun = 0;
        lastCqeSeq = seq;
        sendDbrec.set32(Mlx5Rings.doorbellRecordValue(pi), true);
        blueFlame.set64(sq.get(JAVA_LONG, writer.offsetOf(start)), true);
        posted(seq, SendExecutor.CPU);
        if (doorbellCall != null) {
            doorbellCall.ring();
        }
    }

    void expectStoreRing() {
        device.expectStoreRing(queues);
    }

    /**
     * Request {@code sequence}'s WQE as a template: the offsets of its dynamic fields from the WQE's start, in the
     * mlx5 encoding (big-endian, 32-bit keys); the length is one field, so the total length names it too.
     */
    WqeTemplate template(long sequence) {
        int r = (int) (sequence & reqMask);
        long w = writer.offsetOf(reqPi[r]);
        int op = reqOpcode[r] & 0xff;
        int ds = sq.get(BE32, w + Mlx5Layouts.CTRL_QPN_DS) & 0x3f;
        boolean remote = op == Mlx5Opcodes.RDMA_WRITE || op == Mlx5Opcodes.RDMA_WRITE_IMM || op == Mlx5Opcodes.RDMA_READ;
        boolean sendOp = op == Mlx5Opcodes.SEND || op == Mlx5Opcodes.SEND_IMM;
        int dataUnit = remote ? 2 : 1;
        boolean inline = (sq.get(BE32, w + (long) dataUnit * DS_BYTES) & Mlx5Layouts.INLINE_SEG) != 0;
        if (!(remote || sendOp) || inline || ds != dataUnit + 1) {
            throw new IllegalStateException("send request #" + sequence + " of QP " + qpn + " cannot be a template: it needs"
                    + " exactly one local buffer, no INLINE payload, and a SEND or RDMA opcode");
        }
        int data = dataUnit * DS_BYTES;
        int absent = WqeTemplate.ABSENT;
        return new WqeTemplate(MemoryWord.word64(sq, w, "WQE of send request #" + sequence + " of QP " + qpn),
                data + 8, data + 4, data, data, remote ? DS_BYTES : absent, remote ? DS_BYTES + 8 : absent,
                WqeTemplate.Encoding.MLX5);
    }

    // ---- completions (on the polling thread, through the CQs) ----

    /** A successful CQE of a request the provider signaled itself. */
    private boolean isOwnCqe(MemorySegment cq, long off) {
        if (Mlx5Cqe.opcode(cq, off) != Mlx5Opcodes.CQE_REQ) {
            return false; // an error always reaches the CPU
        }
        long seq = seqAtBb[Mlx5Cqe.wqeCounter(cq, off) & (sqBbs - 1)];
        return reqOwn[(int) (seq & reqMask)];
    }

    private void readSendCqe(MemorySegment cq, long off, long index, Completion out) {
        int opcode = Mlx5Cqe.opcode(cq, off);
        int counter = Mlx5Cqe.wqeCounter(cq, off);
        long seq = seqAtBb[counter & (sqBbs - 1)];
        int r = (int) (seq & reqMask);
        if ((reqPi[r] & 0xffff) != counter || seq >= sqProduced || seq < completedThrough) {
            throw new IllegalStateException("CQE #" + index + " of " + sendCq.name() + " names WQE counter " + counter
                    + ", where no outstanding request of QP " + qpn + " starts");
        }
        CompletionStatus status = CompletionStatus.SUCCESS;
        ErrorDetail detail = ErrorDetail.NONE;
        int bytes = 0;
        if (opcode == Mlx5Opcodes.CQE_REQ) {
            bytes = Mlx5Cqe.byteCount(cq, off);
        } else if (opcode == Mlx5Opcodes.CQE_REQ_ERR || opcode == Mlx5Opcodes.CQE_RESP_ERR) {
            status = Mlx5Opcodes.status(Mlx5Cqe.syndrome(cq, off));
            detail = failed(status, Mlx5Cqe.vendorSyndrome(cq, off));
        } else {
            throw new IllegalStateException("CQE #" + index + " of " + sendCq.name() + " has responder opcode " + opcode);
        }
        for (long done = completedThrough; done <= seq; done++) {
            int d = (int) (done & reqMask);
            if ((reqOpcode[d] & 0xff) != Mlx5Opcodes.NOP) {
                meter.requestDone(reqBytes[d], done == seq ? status : CompletionStatus.SUCCESS);
            }
        }
        piCompleted = reqPi[r] + reqBbs[r];
        completedThrough = seq + 1;
        int sendOpcode = reqOpcode[r] & 0xff;
        CompletionOpcode op = sendOpcode == Mlx5Opcodes.NOP ? CompletionOpcode.SEND : Mlx5Opcodes.requesterCompletion(sendOpcode);
        out.set(reqWrId[r], status, op, detail, bytes, 0, false, qpn, index);
    }

    private void readRecvCqe(MemorySegment cq, long off, long index, Completion out) {
        int opcode = Mlx5Cqe.opcode(cq, off);
        int counter = Mlx5Cqe.wqeCounter(cq, off);
        if (rqCompleted >= rqPosted || (rqCompleted & 0xffff) != counter) {
            throw new IllegalStateException("CQE #" + index + " of " + recvCq.name() + " names receive " + counter
                    + ", not the oldest outstanding receive of QP " + qpn + " (" + (rqCompleted & 0xffff) + ")");
        }
        long wrId = recvWrId[(int) (rqCompleted & rqMask)];
        rqCompleted++;
        readRecvCqe(cq, off, index, out, opcode, wrId);
        meter.received(out.byteLength(), out.status());
    }

    private void readRecvCqe(MemorySegment cq, long off, long index, Completion out, int opcode, long wrId) {
        switch (opcode) {
            case Mlx5Opcodes.CQE_RESP_SEND -> out.set(wrId, CompletionStatus.SUCCESS, CompletionOpcode.RECV, ErrorDetail.NONE,
                    Mlx5Cqe.byteCount(cq, off), 0, false, qpn, index);
            case Mlx5Opcodes.CQE_RESP_SEND_IMM -> out.set(wrId, CompletionStatus.SUCCESS, CompletionOpcode.RECV,
                    ErrorDetail.NONE, Mlx5Cqe.byteCount(cq, off), Mlx5Cqe.immediate(cq, off), true, qpn, index);
            case Mlx5Opcodes.CQE_RESP_WR_IMM -> out.set(wrId, CompletionStatus.SUCCESS, CompletionOpcode.RECV_RDMA_WITH_IMM,
                    ErrorDetail.NONE, Mlx5Cqe.byteCount(cq, off), Mlx5Cqe.immediate(cq, off), true, qpn, index);
            case Mlx5Opcodes.CQE_RESP_ERR, Mlx5Opcodes.CQE_REQ_ERR -> {
                CompletionStatus status = Mlx5Opcodes.status(Mlx5Cqe.syndrome(cq, off));
                out.set(wrId, status, CompletionOpcode.RECV, failed(status, Mlx5Cqe.vendorSyndrome(cq, off)), 0, 0, false,
                        qpn, index);
            }
            default -> throw new IllegalStateException("CQE #" + index + " of " + recvCq.name() + " has opcode " + opcode);
        }
    }

    /** An error CQE: the queue pair is in the error state from here (the device flushes the rest). */
    private ErrorDetail failed(CompletionStatus status, int vendorSyndrome) {
        ErrorDetail aborted = abortReason;
        ErrorDetail detail = aborted != null ? aborted : device.errorDetail(status, vendorSyndrome);
        enterError(detail);
        return detail;
    }

    private synchronized void enterError(ErrorDetail detail) {
        if (state == QpState.READY || state == QpState.RESET) {
            errorDetail = detail;
            state = QpState.ERROR;
            FailureEvent.record("queue pair " + qpn + " of " + nic.name(), "ERROR", detail.text());
        }
    }

    @Override
    public TrafficCounters counters() {
        return meter.snapshot().plus(device.counters(queues));
    }

    @Override
    public void abort(ErrorDetail reason) {
        Objects.requireNonNull(reason, "reason must not be null");
        synchronized (this) {
            if (state == QpState.CLOSED || abortReason != null) {
                return;
            }
            abortReason = reason;
        }
        enterError(reason);
        device.toError(queues);
    }

    // ---- life ----

    private void requireNotClosed() {
        if (state == QpState.CLOSED) {
            throw new IllegalStateException("queue pair " + qpn + " is closed");
        }
    }

    private void requireSendable() {
        QpState s = state;
        if (s == QpState.RESET) {
            throw new IllegalStateException("queue pair " + qpn + " is not connected: call connect(peer endpoint) first");
        }
        if (s == QpState.CLOSED) {
            throw new IllegalStateException("queue pair " + qpn + " is closed");
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (state == QpState.CLOSED) {
                return;
            }
            state = QpState.CLOSED;
        }
        nic.removed(this);
        device.destroyQp(queues);
        device.destroyCq(sendCq.queues());
        device.destroyCq(recvCq.queues());
        sendCq.releaseRegion().close();
        recvCq.releaseRegion().close();
    }

    @Override
    public String toString() {
        return "Mlx5QueuePair{" + qpn + ", " + state + (state == QpState.ERROR ? " (" + errorDetail.text() + ")" : "")
                + ", " + device.name() + "}";
    }

    /** A prepared send of this queue pair. */
    static final class Mlx5SendRequest extends SendRequest {
        private final Mlx5QueuePair qp;

        Mlx5SendRequest(Mlx5QueuePair qp, long sequence, MemopBatch memops, boolean signaled) {
            super(qp, sequence, memops, signaled);
            this.qp = qp;
        }

        @Override
        protected void cancelPrepared() {
            qp.cancelPrepared(sequence(), signaled());
        }

        @Override
        public void expectPlainStoreRing() {
            qp.expectStoreRing();
        }

        @Override
        public boolean isExecuted() {
            return qp.isExecuted(sequence());
        }

        @Override
        public WqeTemplate template() {
            return qp.template(sequence());
        }

        @Override
        protected void checkPostOrder(int earlierInBatch, SendExecutor executor) {
            qp.checkPostOrder(this, earlierInBatch, executor);
        }

        @Override
        protected void posted(SendExecutor executor) {
            qp.posted(sequence(), executor);
        }
    }
}
