package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.SendFlags;

import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.swnic.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Executes one queue pair's send queue entries over shared memory: the sender-driven single copy.
 *
 * <p>Every check happens before the first byte moves: local keys and bounds, the peer's receive
 * buffers or its rkey, access flags and bounds. A failed check writes an error CQE and moves the queue
 * pair to the error state; no byte outside a checked range is ever written. Requests run one at a time
 * in queue order, so FENCE (wait for earlier READs and atomics) always holds. One instance per queue
 * pair, used under its execution lock; the scratch arrays make host execution allocation-free.
 *
 * <p>A piece of a copy is a host segment and offset, or device memory: a null segment and a device
 * address here. Host to host is {@link MemorySegment#copy}; a request that touches device memory copies
 * through the NIC's {@link DeviceSupport} instead, under {@link DeviceCopyLock} after checking once more
 * that none of its memory was retired meanwhile. Atomics need host memory at both ends.
 */
final class WqeExecutor {
    static final int DONE = 0;
    static final int STALLED = 1;
    /** Sent over UCX; the response completes it ({@link UcxLink}). */
    static final int IN_FLIGHT = 2;

    private static final int MAX_SGE = 8;

    private final ShmQueuePair qp;
    private final MemorySegment sq;
    private final long rnrTimeoutNanos;

    private final MemorySegment[] srcSeg = new MemorySegment[MAX_SGE];
    private final long[] srcOff = new long[MAX_SGE];
    private final int[] srcLen = new int[MAX_SGE];
    private int srcCount;
    private final MemorySegment[] dstSeg = new MemorySegment[MAX_SGE];
    private final long[] dstOff = new long[MAX_SGE];
    private final int[] dstLen = new int[MAX_SGE];
    private int dstCount;
    /** Peer device memory of the request's pieces, checked before a device copy; the first {@code peerDeviceCount}. */
    private final DeviceMemory[] peerDevice = new DeviceMemory[MAX_SGE];
    private int peerDeviceCount;
    /** Whether a piece of the request is device memory. */
    private boolean device;

    private long stallSince;
    private boolean peerVerified;

    // Fields of the request being executed.
    private long w;
    private int length;
    private ErrorDetail failure;
    private CompletionStatus failureStatus;

    WqeExecutor(ShmQueuePair qp) {
        this.qp = qp;
        this.sq = qp.seg;
        this.rnrTimeoutNanos = qp.nic.config().rnrTimeout().toNanos();
    }

    /**
     * Executes request {@code index}.
     *
     * @return {@link #DONE} when it completed (successfully or not), {@link #STALLED} when it must be
     * retried later because the peer is not ready to receive
     */
    int execute(long index) {
        w = qp.wqe(index);
        device = false;
        peerDeviceCount = 0;
        length = sq.get(JAVA_INT, w + Layouts.Wqe.OFF_LENGTH);
        Opcode op;
        try {
            op = Opcode.ofCode(sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_OPCODE) & 0xff);
        } catch (IllegalArgumentException e) {
            return fail(index, CompletionStatus.LOC_QP_OP_ERR, ErrorDetail.MALFORMED_REQUEST);
        }
        UcxLink link = qp.ucxLink();
        if (link != null) {
            return link.execute(index);
        }
        RemoteQp r = qp.remote;
        ErrorDetail unusable = r.unusable();
        if (unusable != null) {
            return fail(index, CompletionStatus.RETRY_EXC_ERR, unusable);
        }
        if (!peerVerified) {
            long connected = r.connectedToken();
            if (connected == 0 || r.stateCode() == QpState.RESET.code()) {
                return stall(index); // the peer has not connected yet
            }
            if (connected != qp.token()) {
                return fail(index, CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            }
            peerVerified = true;
        }
        try {
            int result = switch (op) {
                case SEND, SEND_WITH_IMM -> send(index, r, op);
                case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> write(index, r, op);
                case RDMA_READ -> read(index, r);
                case ATOMIC_FETCH_ADD, ATOMIC_CMP_SWAP -> atomic(index, r, op);
            };
            if (result == DONE) {
                stallSince = 0;
            }
            return result;
        } catch (IllegalStateException e) {
            // A local region was closed under the request.
            return fail(index, CompletionStatus.LOC_PROT_ERR, ErrorDetail.BAD_LKEY);
        }
    }

    private int send(long index, RemoteQp r, Opcode op) {
        if (!gatherLocal(false)) {
            return fail(index, CompletionStatus.LOC_PROT_ERR, failure);
        }
        long slot = r.claimed();
        if (!r.isPosted(slot)) {
            return stall(index);
        }
        MemorySegment peer = r.segment();
        long e = r.rqe(slot);
        long recvWrId = peer.get(JAVA_LONG, e + Layouts.Rqe.OFF_WR_ID);
        int n = peer.get(JAVA_INT, e + Layouts.Rqe.OFF_NUM_SGE);
        long capacity = 0;
        boolean valid = n >= 0 && n <= MAX_SGE;
        boolean unreachable = false;
        dstCount = 0;
        for (int i = 0; valid && i < n; i++) {
            long s = e + Layouts.Rqe.OFF_SGE + i * Layouts.Sge.SIZE;
            long addr = peer.get(JAVA_LONG, s + Layouts.Sge.OFF_ADDR);
            long lkey = peer.get(JAVA_LONG, s + Layouts.Sge.OFF_LKEY);
            int len = peer.get(JAVA_INT, s + Layouts.Sge.OFF_LENGTH);
            RemoteNode.ResolvedMr mr = r.node().resolveLkey(lkey);
            if (mr == RemoteNode.UNREACHABLE) {
                unreachable = true;
            }
            if (mr == null || unreachable || (mr.access() & Access.LOCAL_WRITE) == 0 || !mr.contains(addr, len)) {
                valid = false;
                break;
            }
            addRemoteDst(mr, addr, len);
            capacity += len;
        }
        int imm = sq.get(JAVA_INT, w + Layouts.Wqe.OFF_IMM);
        boolean hasImm = op == Opcode.SEND_WITH_IMM;
        if (!valid || length > capacity) {
            // The receive is consumed and fails at both ends, as a responder error does on a real NIC.
            ErrorDetail why = unreachable ? ErrorDetail.DEVICE_UNREACHABLE
                    : valid ? ErrorDetail.RECV_TOO_SMALL : ErrorDetail.RECV_BUFFER_INVALID;
            if (r.claim(slot)) {
                r.complete(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV,
                        valid ? CompletionStatus.LOC_LEN_ERR : CompletionStatus.LOC_PROT_ERR, why);
            }
            return fail(index, valid ? CompletionStatus.REM_INV_REQ_ERR : CompletionStatus.REM_OP_ERR, why);
        }
        if (!r.claim(slot)) {
            return fail(index, CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
        }
        if (!copy(r, CompletionStatus.REM_OP_ERR, ErrorDetail.RECV_BUFFER_INVALID)) {
            r.complete(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV, CompletionStatus.GENERAL_ERR, failure);
            return fail(index, failureStatus, failure);
        }
        r.complete(slot, recvWrId, length, imm, hasImm, CompletionOpcode.RECV, CompletionStatus.SUCCESS, ErrorDetail.NONE);
        qp.completeSend(index, CompletionStatus.SUCCESS, ErrorDetail.NONE, length, false);
        return DONE;
    }

    private int write(long index, RemoteQp r, Opcode op) {
        if (!gatherLocal(false)) {
            return fail(index, CompletionStatus.LOC_PROT_ERR, failure);
        }
        RemoteNode.ResolvedMr mr = checkRemote(r, Access.REMOTE_WRITE, length);
        if (mr == null) {
            return fail(index, CompletionStatus.REM_ACCESS_ERR, failure);
        }
        long slot = 0;
        long recvWrId = 0;
        if (op == Opcode.RDMA_WRITE_WITH_IMM) {
            slot = r.claimed();
            if (!r.isPosted(slot)) {
                return stall(index);
            }
            recvWrId = r.segment().get(JAVA_LONG, r.rqe(slot) + Layouts.Rqe.OFF_WR_ID);
            if (!r.claim(slot)) {
                return fail(index, CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            }
        }
        dstCount = 0;
        addRemoteDst(mr, remoteAddress(), length);
        if (!copy(r, CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY)) {
            if (op == Opcode.RDMA_WRITE_WITH_IMM) {
                r.complete(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV_RDMA_WITH_IMM, CompletionStatus.GENERAL_ERR,
                        failure);
            }
            return fail(index, failureStatus, failure);
        }
        if (op == Opcode.RDMA_WRITE_WITH_IMM) {
            r.complete(slot, recvWrId, length, sq.get(JAVA_INT, w + Layouts.Wqe.OFF_IMM), true,
                    CompletionOpcode.RECV_RDMA_WITH_IMM, CompletionStatus.SUCCESS, ErrorDetail.NONE);
        }
        qp.completeSend(index, CompletionStatus.SUCCESS, ErrorDetail.NONE, length, false);
        return DONE;
    }

    private int read(long index, RemoteQp r) {
        RemoteNode.ResolvedMr mr = checkRemote(r, Access.REMOTE_READ, length);
        if (mr == null) {
            return fail(index, CompletionStatus.REM_ACCESS_ERR, failure);
        }
        if (!gatherLocal(true)) {
            return fail(index, CompletionStatus.LOC_PROT_ERR, failure);
        }
        // The local buffers are the destinations of a READ: swap the roles of the two lists.
        dstCount = 0;
        for (int i = 0; i < srcCount; i++) {
            addDst(srcSeg[i], srcOff[i], srcLen[i]);
        }
        srcCount = 0;
        if (mr.device() == null) {
            addSrc(mr.region(), mr.segmentOffset(remoteAddress()), length);
        } else {
            addPeerDevice(mr.device());
            addSrc(null, mr.deviceAddress(remoteAddress()), length);
        }
        if (!copy(r, CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY)) {
            return fail(index, failureStatus, failure);
        }
        qp.completeSend(index, CompletionStatus.SUCCESS, ErrorDetail.NONE, length, false);
        return DONE;
    }

    private int atomic(long index, RemoteQp r, Opcode op) {
        RemoteNode.ResolvedMr mr = checkRemote(r, Access.REMOTE_ATOMIC, 8);
        if (mr == null) {
            return fail(index, CompletionStatus.REM_ACCESS_ERR, failure);
        }
        if (mr.device() != null) {
            return fail(index, CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.DEVICE_ATOMIC);
        }
        long offset = mr.segmentOffset(remoteAddress());
        if ((remoteAddress() & 7) != 0 || ((mr.region().address() + offset) & 7) != 0) {
            return fail(index, CompletionStatus.REM_ACCESS_ERR, ErrorDetail.REMOTE_MISALIGNED);
        }
        if (!gatherLocal(true)) {
            return fail(index, CompletionStatus.LOC_PROT_ERR, failure);
        }
        if (device) {
            // Refused at post; a template's kernel may still have named a device buffer since.
            return fail(index, CompletionStatus.LOC_QP_OP_ERR, ErrorDetail.DEVICE_ATOMIC);
        }
        long operand = sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_COMPARE_ADD);
        long original = op == Opcode.ATOMIC_FETCH_ADD
                ? (long) LONG.getAndAdd(mr.region(), offset, operand)
                : (long) LONG.compareAndExchange(mr.region(), offset, operand, sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_SWAP));
        srcSeg[0].set(JAVA_LONG, srcOff[0], original);
        qp.completeSend(index, CompletionStatus.SUCCESS, ErrorDetail.NONE, 8, false);
        return DONE;
    }

    private long remoteAddress() {
        return sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_REMOTE_ADDR);
    }

    /** Resolves and checks the request's rkey, access and bounds; null (with {@link #failure}) if refused. */
    private RemoteNode.ResolvedMr checkRemote(RemoteQp r, int needed, long bytes) {
        RemoteNode.ResolvedMr mr = r.node().resolveRkey(sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_RKEY));
        if (mr == null) {
            failure = ErrorDetail.BAD_RKEY;
            return null;
        }
        if (mr == RemoteNode.UNREACHABLE) {
            failure = ErrorDetail.DEVICE_UNREACHABLE;
            return null;
        }
        if ((mr.access() & needed) != needed) {
            failure = ErrorDetail.REMOTE_ACCESS_DENIED;
            return null;
        }
        if (!mr.contains(remoteAddress(), bytes)) {
            failure = ErrorDetail.REMOTE_OUT_OF_BOUNDS;
            return null;
        }
        return mr;
    }

    /**
     * Resolves the request's local buffers (or its inline bytes) into the source list.
     *
     * @param writable whether the NIC writes them (READ, atomics)
     * @return false (with {@link #failure}) if a key or range no longer checks out
     */
    private boolean gatherLocal(boolean writable) {
        srcCount = 0;
        int flags = sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS);
        if ((flags & SendFlags.INLINE) != 0) {
            addSrc(sq, w + Layouts.Wqe.OFF_DATA, length);
            return true;
        }
        int n = sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_NUM_SGE);
        for (int i = 0; i < n; i++) {
            long s = w + Layouts.Wqe.OFF_DATA + i * Layouts.Sge.SIZE;
            long addr = sq.get(JAVA_LONG, s + Layouts.Sge.OFF_ADDR);
            int len = sq.get(JAVA_INT, s + Layouts.Sge.OFF_LENGTH);
            ShmMemoryRegion mr = qp.nic.localMr(sq.get(JAVA_LONG, s + Layouts.Sge.OFF_LKEY));
            if (mr == null) {
                failure = ErrorDetail.BAD_LKEY;
                return false;
            }
            if (!mr.contains(addr, len)) {
                failure = ErrorDetail.LOCAL_OUT_OF_BOUNDS;
                return false;
            }
            if (writable && (mr.access() & Access.LOCAL_WRITE) == 0) {
                failure = ErrorDetail.LOCAL_ACCESS_DENIED;
                return false;
            }
            if (mr.isDevice()) {
                device = true;
                addSrc(null, addr, len); // a device range's addresses are device pointers
            } else {
                addSrc(mr.region().segment(), mr.offset() + (addr - mr.address()), len);
            }
        }
        return true;
    }

    private void addSrc(MemorySegment seg, long off, int len) {
        srcSeg[srcCount] = seg;
        srcOff[srcCount] = off;
        srcLen[srcCount] = len;
        srcCount++;
    }

    private void addDst(MemorySegment seg, long off, int len) {
        dstSeg[dstCount] = seg;
        dstOff[dstCount] = off;
        dstLen[dstCount] = len;
        dstCount++;
    }

    /** Adds the peer's range at {@code addr} of a checked registration as a destination piece. */
    private void addRemoteDst(RemoteNode.ResolvedMr mr, long addr, int len) {
        if (mr.device() == null) {
            addDst(mr.region(), mr.segmentOffset(addr), len);
        } else {
            addPeerDevice(mr.device());
            addDst(null, mr.deviceAddress(addr), len);
        }
    }

    private void addPeerDevice(DeviceMemory memory) {
        device = true;
        peerDevice[peerDeviceCount++] = memory;
    }

    /**
     * Copies the source list into the destination list, which the caller checked is large enough.
     *
     * @param r                the peer
     * @param retiredStatus    the status when a peer's device memory was retired since the check
     * @param retiredDetail    its detail
     * @return false (with {@link #failure} and {@link #failureStatus}) if a device copy could not run
     */
    private boolean copy(RemoteQp r, CompletionStatus retiredStatus, ErrorDetail retiredDetail) {
        if (device) {
            return deviceCopy(r, retiredStatus, retiredDetail);
        }
        forEachPiece(MemorySegment::copy);
        return true;
    }

    /** One piece of a copy: a run of bytes that lies in one source and one destination buffer. */
    @FunctionalInterface
    private interface PieceCopy {
        void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes);
    }

    /** Walks the gather list against the scatter list, handing each piece to {@code copy}. */
    private void forEachPiece(PieceCopy copy) {
        int si = 0;
        int di = 0;
        long sDone = 0;
        long dDone = 0;
        while (si < srcCount && di < dstCount) {
            long n = Math.min(srcLen[si] - sDone, dstLen[di] - dDone);
            if (n > 0) {
                copy.copy(srcSeg[si], srcOff[si] + sDone, dstSeg[di], dstOff[di] + dDone, n);
            }
            sDone += n;
            dDone += n;
            if (sDone == srcLen[si]) {
                si++;
                sDone = 0;
            }
            if (dDone == dstLen[di]) {
                di++;
                dDone = 0;
            }
        }
    }

    /**
     * The copy of a request that touches device memory: under {@link DeviceCopyLock}, checks that its local
     * registrations and the peer's device memory are still there, then queues every piece on the NIC's copy
     * stream and waits.
     */
    private boolean deviceCopy(RemoteQp r, CompletionStatus retiredStatus, ErrorDetail retiredDetail) {
        DeviceSupport support = qp.nic.deviceSupport();
        synchronized (DeviceCopyLock.LOCK) {
            if (!localStillRegistered()) {
                return copyFailed(CompletionStatus.LOC_PROT_ERR, ErrorDetail.BAD_LKEY);
            }
            for (int i = 0; i < peerDeviceCount; i++) {
                if (!peerDevice[i].isUsable()) {
                    ErrorDetail gone = r.node().gone();
                    return gone != null ? copyFailed(CompletionStatus.RETRY_EXC_ERR, gone)
                            : copyFailed(retiredStatus, retiredDetail);
                }
            }
            if (support == null) {
                return copyFailed(CompletionStatus.GENERAL_ERR, ErrorDetail.DEVICE_COPY_FAILED);
            }
            try {
                support.begin();
                forEachPiece(support::copy);
                support.finish();
            } catch (RuntimeException e) {
                support.abort();
                NicDevices.LOG.log(System.Logger.Level.WARNING, "a device copy of queue pair " + qp.number() + " of "
                        + qp.nic.name() + " failed: " + e.getMessage());
                return copyFailed(CompletionStatus.GENERAL_ERR, ErrorDetail.DEVICE_COPY_FAILED);
            } finally {
                peerDeviceCount = 0;
            }
        }
        return true;
    }

    /** Whether every local buffer of the request is still in a live registration (under the copy lock). */
    private boolean localStillRegistered() {
        int flags = sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS);
        if ((flags & SendFlags.INLINE) != 0) {
            return true;
        }
        int n = sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_NUM_SGE);
        for (int i = 0; i < n; i++) {
            long s = w + Layouts.Wqe.OFF_DATA + i * Layouts.Sge.SIZE;
            if (qp.nic.localMr(sq.get(JAVA_LONG, s + Layouts.Sge.OFF_LKEY)) == null) {
                return false;
            }
        }
        return true;
    }

    private boolean copyFailed(CompletionStatus status, ErrorDetail detail) {
        failureStatus = status;
        failure = detail;
        peerDeviceCount = 0;
        return false;
    }

    /** The peer is not ready to receive: retry later, or fail once the receiver-not-ready timeout passed. */
    private int stall(long index) {
        long now = System.nanoTime();
        if (stallSince == 0) {
            stallSince = now;
            return STALLED;
        }
        if (now - stallSince < rnrTimeoutNanos) {
            return STALLED;
        }
        stallSince = 0;
        return fail(index, CompletionStatus.RNR_RETRY_EXC_ERR, ErrorDetail.RNR_TIMEOUT);
    }

    /** Completes the request with an error and moves the queue pair to the error state. */
    private int fail(long index, CompletionStatus status, ErrorDetail detail) {
        stallSince = 0;
        qp.completeSend(index, status, detail, 0, true);
        qp.enterError(detail);
        return DONE;
    }
}
