package dev.gdasync.gdsync.swnic.shm;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.ScatterGatherList;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.core.AccessChecker;
import dev.gdasync.gdsync.swnic.core.Connection;
import dev.gdasync.gdsync.swnic.core.DeviceMemory;
import dev.gdasync.gdsync.swnic.core.KeyedRange;
import dev.gdasync.gdsync.swnic.core.Layouts;
import dev.gdasync.gdsync.swnic.core.ReceiveSlots;
import dev.gdasync.gdsync.swnic.core.Refusal;
import dev.gdasync.gdsync.swnic.core.SwMemoryRegion;
import dev.gdasync.gdsync.swnic.core.SwQueuePair;
import dev.gdasync.gdsync.swnic.cudaipc.DeviceCopyLock;
import dev.gdasync.gdsync.swnic.cudaipc.DeviceSupport;
import dev.gdasync.gdsync.swnic.cudaipc.NicDevices;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

// Why this file is long: it is the whole executor of one transport (send, write, read, atomics, the one-sided and
// small-message fast paths, device memory), each opcode checked by the same AccessChecker calls, as a transport of UCT is.
/**
 * A queue pair's connection to a peer on this host, over shared memory: the sender-driven single copy. The
 * executor of a request copies its bytes straight into the peer's posted receive buffer or target region (mapped
 * here) and writes the peer's receive CQE; no thread of the peer takes part.
 *
 * <p>Every check happens before the first byte moves, by {@link AccessChecker#WITH_DEVICE_MEMORY}: local keys and
 * bounds, the peer's receive buffers or its rkey, access flags and bounds. A refusal writes an error CQE and moves
 * the queue pair to the error state; no byte outside a checked range is ever written. Requests run one at a time
 * in queue order, so FENCE (wait for earlier READs and atomics) always holds. Used under the queue pair's
 * execution lock; the scratch arrays make host execution allocation-free.
 *
 * <p>A piece of a copy is a host segment and offset, or device memory: a null segment and a device address here.
 * Host to host is {@link MemorySegment#copy}; a request that touches device memory copies through the NIC's
 * {@link DeviceSupport} instead, under {@link DeviceCopyLock} after checking once more that none of its memory was
 * retired meanwhile. Atomics need host memory at both ends.
 */
final class ShmConnection implements Connection {
    private static final int MAX_SGE = 8;
    private static final AccessChecker CHECK = AccessChecker.WITH_DEVICE_MEMORY;

    private final SwQueuePair qp;
    private final ShmTransport transport;
    private final PeerQueuePair peer;
    private final ReceiveSlots peerReceives;
    private final MemorySegment sq;
    private final NicDevices devices;
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

    /**
     * When the head request first stalled, or 0; written by executors under the lock, read racily by
     * {@link #stallMayClear} (a plain field: the fast path writes it for every request).
     */
    private long stallSince;
    private boolean peerVerified;
    /** The peer's receive the last request consumed, or -1: for events. */
    private long lastPeerReceive = -1;

    // Fields of the request being executed.
    private long w;
    private int length;
    /** Why the request's check or copy failed. */
    private Refusal failure;

    ShmConnection(SwQueuePair qp, ShmTransport transport, PeerQueuePair peer, NicDevices devices) {
        this.qp = qp;
        this.transport = transport;
        this.peer = peer;
        this.peerReceives = peer.receives();
        this.sq = qp.segment();
        this.devices = devices;
        this.rnrTimeoutNanos = qp.nic().settings().rnrTimeout().toNanos();
    }

    /** @return the peer's node, as this process maps it */
    PeerNode node() {
        return peer.node();
    }

    /**
     * The peer's region file is mapped here already (its executor copies into it): the same mapping, sliced, when
     * the key grants remote read and write on host memory and covers the range.
     */
    @Override
    public void wakePeer() {
        peer.node().wakeSleepers();
    }

    @Override
    public MemorySegment peerMemory(long rkey, long address, long length) {
        if (length < 1) {
            return null;
        }
        KeyedRange mr = peer.node().resolveRkey(rkey);
        if (mr == null || mr.device() != null || mr.hostMemory() == null
                || CHECK.remote(mr, address, length, Access.REMOTE_WRITE) != null
                || CHECK.remote(mr, address, length, Access.REMOTE_READ) != null) {
            return null;
        }
        return mr.hostMemory().asSlice(mr.hostOffset(address), length);
    }

    @Override
    public Outcome execute(long index) {
        lastPeerReceive = -1;
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
        ErrorDetail unusable = peer.unusable();
        if (unusable != null) {
            return fail(index, CompletionStatus.RETRY_EXC_ERR, unusable);
        }
        if (!peerVerified) {
            long connected = peer.connectedToken();
            if (connected == 0 || peer.stateCode() == QpState.RESET.code()) {
                return stall(index); // the peer has not connected yet
            }
            if (connected != qp.token()) {
                return fail(index, CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            }
            peerVerified = true;
        }
        try {
            Outcome result = switch (op) {
                case SEND, SEND_WITH_IMM -> send(index, op);
                case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> write(index, op);
                case RDMA_READ -> read(index);
                case ATOMIC_FETCH_ADD, ATOMIC_CMP_SWAP -> atomic(index, op);
            };
            if (result == Outcome.DONE) {
                stallSince = 0;
                if (op != Opcode.RDMA_READ) {
                    // It wrote into the peer (a receive and its CQE, a window, an atomic's word): wake the peer's
                    // threads parked waiting for their peers.
                    peer.node().wakeSleepers();
                }
            }
            return result;
        } catch (IllegalStateException e) {
            // A local region was closed under the request.
            return fail(index, Refusal.BAD_LKEY);
        }
    }

    private Outcome send(long index, Opcode op) {
        if (!gatherLocal(false)) {
            return fail(index, failure);
        }
        ReceiveSlots r = peerReceives;
        long slot = r.claimed();
        if (!r.isPosted(slot)) {
            return stall(index);
        }
        long recvWrId = r.wrId(slot);
        int n = r.bufferCount(slot);
        long capacity = 0;
        Refusal refused = n >= 0 && n <= MAX_SGE ? null : Refusal.RECV_BUFFER_INVALID;
        dstCount = 0;
        for (int i = 0; refused == null && i < n; i++) {
            long addr = r.bufferAddress(slot, i);
            int len = r.bufferLength(slot, i);
            KeyedRange mr = peer.node().resolveLkey(r.bufferLkey(slot, i));
            refused = CHECK.receiveBuffer(mr, addr, len);
            if (refused == null) {
                addRemoteDst(mr, addr, len);
                capacity += len;
            }
        }
        if (refused == null && length > capacity) {
            refused = Refusal.RECV_TOO_SMALL;
        }
        int imm = sq.get(JAVA_INT, w + Layouts.Wqe.OFF_IMM);
        boolean hasImm = op == Opcode.SEND_WITH_IMM;
        if (refused != null) {
            // The receive is consumed and fails at both ends, as a responder error does on a real NIC.
            if (r.claim(slot)) {
                r.complete(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV, refused.receiverStatus(), refused.detail());
            }
            return fail(index, refused);
        }
        if (!r.claim(slot)) {
            return fail(index, CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
        }
        lastPeerReceive = slot;
        if (!copy(Refusal.RECV_BUFFER_INVALID)) {
            r.complete(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV, CompletionStatus.GENERAL_ERR, failure.detail());
            return fail(index, failure);
        }
        r.complete(slot, recvWrId, length, imm, hasImm, CompletionOpcode.RECV, CompletionStatus.SUCCESS, ErrorDetail.NONE);
        qp.completeSend(index, CompletionStatus.SUCCESS, ErrorDetail.NONE, length, false);
        return Outcome.DONE;
    }

    /**
     * The small-message fast path ({@link Connection#sendDirect}): a SEND from one host buffer into a posted receive
     * of one host buffer, from the work request's fields. The checks are {@link #execute}'s, in its order, and all
     * happen before the receive is claimed: a request that is not this case, or that any check would refuse,
     * is declined untouched, and the send queue path then runs it and refuses it exactly as before. Once the
     * receive is claimed nothing can fail on host memory but losing the claim to the owner's flusher, which fails
     * the request as {@link #send} does.
     */
    @Override
    public boolean sendDirect(long index, SendWorkRequest wr, int length) {
        Opcode op = wr.opcode();
        if (op == Opcode.RDMA_WRITE || op == Opcode.RDMA_READ || op == Opcode.ATOMIC_FETCH_ADD
                || op == Opcode.ATOMIC_CMP_SWAP) {
            return oneSidedDirect(index, wr, length);
        }
        ScatterGatherList sgl = wr.sgl();
        if ((op != Opcode.SEND && op != Opcode.SEND_WITH_IMM) || (wr.flags() & SendFlags.INLINE) != 0
                || sgl.count() != 1 || !peerVerified || peer.unusable() != null) {
            return false;
        }
        long addr = sgl.address(0);
        SwMemoryRegion local = qp.nic().localMr(sgl.lkey(0));
        if (CHECK.local(local, addr, length, false) != null || local.isDevice()) {
            return false;
        }
        ReceiveSlots r = peerReceives;
        long slot = r.claimed();
        if (!r.isPosted(slot) || r.bufferCount(slot) != 1) {
            return false;
        }
        long recvAddr = r.bufferAddress(slot, 0);
        int recvLen = r.bufferLength(slot, 0);
        KeyedRange dst = peer.node().resolveLkey(r.bufferLkey(slot, 0));
        if (CHECK.receiveBuffer(dst, recvAddr, recvLen) != null || dst.device() != null || length > recvLen) {
            return false;
        }
        long recvWrId = r.wrId(slot);
        if (!r.claim(slot)) {
            stallSince = 0;
            qp.failDirectSend(index, wr, CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            return true;
        }
        lastPeerReceive = slot;
        try {
            if (length > 0) {
                MemorySegment.copy(local.hostMemory(), local.hostOffset(addr), dst.hostMemory(), dst.hostOffset(recvAddr),
                        length);
            }
        } catch (IllegalStateException e) {
            // The local region was closed under the request, as execute() answers it.
            stallSince = 0;
            qp.failDirectSend(index, wr, Refusal.BAD_LKEY.status(), Refusal.BAD_LKEY.detail());
            return true;
        }
        boolean hasImm = op == Opcode.SEND_WITH_IMM;
        r.complete(slot, recvWrId, length, hasImm ? wr.immediate() : 0, hasImm, CompletionOpcode.RECV,
                CompletionStatus.SUCCESS, ErrorDetail.NONE);
        qp.completeDirectSend(index, wr, CompletionStatus.SUCCESS, ErrorDetail.NONE, length);
        stallSince = 0;
        peer.node().wakeSleepers();
        return true;
    }

    /**
     * The largest WRITE or READ the fast path takes. A larger one goes through the send queue (its entry written and
     * rung, as any post): next to the copy the entry costs nothing. The ring still executes it at once on the posting
     * thread unless the agent holds the queue pair at that moment, so a put or get of megabytes returns once copied.
     */
    static final int ONE_SIDED_DIRECT_MAX = 64 * 1024;

    /**
     * The one-sided fast path: a WRITE (without immediate) or READ of at most {@link #ONE_SIDED_DIRECT_MAX} bytes, or an
     * atomic, between one host buffer here and host memory of the peer, done by the posting thread, as {@link #execute} would do it on the agent: the same checks
     * first, and anything they would refuse (or device memory, several buffers, a peer not verified) declined
     * untouched, for the send queue path to run and refuse exactly as before. A put's data is visible before
     * anything the thread does next (a flag put, a wait's store); the peer's sleepers are woken for it.
     */
    private boolean oneSidedDirect(long index, SendWorkRequest wr, int length) {
        Opcode op = wr.opcode();
        ScatterGatherList sgl = wr.sgl();
        if (length > ONE_SIDED_DIRECT_MAX || sgl.count() != 1 || !peerVerified || peer.unusable() != null) {
            return false;
        }
        boolean atomic = op == Opcode.ATOMIC_FETCH_ADD || op == Opcode.ATOMIC_CMP_SWAP;
        long addr = sgl.address(0);
        SwMemoryRegion local = qp.nic().localMr(sgl.lkey(0));
        if (CHECK.local(local, addr, length, op != Opcode.RDMA_WRITE) != null || local.isDevice()) {
            return false;
        }
        long remote = wr.remoteAddress();
        KeyedRange mr = peer.node().resolveRkey(wr.rkey());
        int needed = atomic ? Access.REMOTE_ATOMIC : op == Opcode.RDMA_WRITE ? Access.REMOTE_WRITE : Access.REMOTE_READ;
        if (CHECK.remote(mr, remote, atomic ? 8 : length, needed) != null || mr.device() != null) {
            return false;
        }
        try {
            MemorySegment mine = local.hostMemory();
            long mineOffset = local.hostOffset(addr);
            MemorySegment theirs = mr.hostMemory();
            long theirsOffset = mr.hostOffset(remote);
            if (op == Opcode.RDMA_WRITE) {
                if (length > 0) {
                    MemorySegment.copy(mine, mineOffset, theirs, theirsOffset, length);
                }
            } else if (op == Opcode.RDMA_READ) {
                if (length > 0) {
                    MemorySegment.copy(theirs, theirsOffset, mine, mineOffset, length);
                }
            } else {
                long original = op == Opcode.ATOMIC_FETCH_ADD
                        ? (long) LONG.getAndAdd(theirs, theirsOffset, wr.compareAdd())
                        : (long) LONG.compareAndExchange(theirs, theirsOffset, wr.compareAdd(), wr.swap());
                mine.set(JAVA_LONG, mineOffset, original);
            }
        } catch (IllegalStateException e) {
            // The local region was closed under the request, as execute() answers it.
            qp.failDirectSend(index, wr, Refusal.BAD_LKEY.status(), Refusal.BAD_LKEY.detail());
            return true;
        }
        VarHandle.releaseFence();
        qp.completeDirectSend(index, wr, CompletionStatus.SUCCESS, ErrorDetail.NONE, atomic ? 8 : length);
        if (op != Opcode.RDMA_READ) {
            peer.node().wakeSleepers();
        }
        return true;
    }

    private Outcome write(long index, Opcode op) {
        if (!gatherLocal(false)) {
            return fail(index, failure);
        }
        KeyedRange mr = checkRemote(Access.REMOTE_WRITE, length);
        if (mr == null) {
            return fail(index, failure);
        }
        ReceiveSlots r = peerReceives;
        long slot = 0;
        long recvWrId = 0;
        if (op == Opcode.RDMA_WRITE_WITH_IMM) {
            slot = r.claimed();
            if (!r.isPosted(slot)) {
                return stall(index);
            }
            recvWrId = r.wrId(slot);
            if (!r.claim(slot)) {
                return fail(index, CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            }
            lastPeerReceive = slot;
        }
        dstCount = 0;
        addRemoteDst(mr, remoteAddress(), length);
        if (!copy(Refusal.BAD_RKEY)) {
            if (op == Opcode.RDMA_WRITE_WITH_IMM) {
                r.complete(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV_RDMA_WITH_IMM, CompletionStatus.GENERAL_ERR,
                        failure.detail());
            }
            return fail(index, failure);
        }
        if (op == Opcode.RDMA_WRITE_WITH_IMM) {
            r.complete(slot, recvWrId, length, sq.get(JAVA_INT, w + Layouts.Wqe.OFF_IMM), true,
                    CompletionOpcode.RECV_RDMA_WITH_IMM, CompletionStatus.SUCCESS, ErrorDetail.NONE);
        }
        qp.completeSend(index, CompletionStatus.SUCCESS, ErrorDetail.NONE, length, false);
        return Outcome.DONE;
    }

    private Outcome read(long index) {
        KeyedRange mr = checkRemote(Access.REMOTE_READ, length);
        if (mr == null) {
            return fail(index, failure);
        }
        if (!gatherLocal(true)) {
            return fail(index, failure);
        }
        // The local buffers are the destinations of a READ: swap the roles of the two lists.
        dstCount = 0;
        for (int i = 0; i < srcCount; i++) {
            addDst(srcSeg[i], srcOff[i], srcLen[i]);
        }
        srcCount = 0;
        if (mr.device() == null) {
            addSrc(mr.hostMemory(), mr.hostOffset(remoteAddress()), length);
        } else {
            addPeerDevice(mr.device());
            addSrc(null, mr.deviceAddress(remoteAddress()), length);
        }
        if (!copy(Refusal.BAD_RKEY)) {
            return fail(index, failure);
        }
        qp.completeSend(index, CompletionStatus.SUCCESS, ErrorDetail.NONE, length, false);
        return Outcome.DONE;
    }

    private Outcome atomic(long index, Opcode op) {
        KeyedRange mr = checkRemote(Access.REMOTE_ATOMIC, 8);
        if (mr == null) {
            return fail(index, failure);
        }
        if (!gatherLocal(true)) {
            return fail(index, failure);
        }
        if (device) {
            // Refused at post; a template's kernel may still have named a device buffer since.
            return fail(index, Refusal.LOCAL_DEVICE_ATOMIC);
        }
        long offset = mr.hostOffset(remoteAddress());
        long operand = sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_COMPARE_ADD);
        MemorySegment target = mr.hostMemory();
        long original = op == Opcode.ATOMIC_FETCH_ADD
                ? (long) LONG.getAndAdd(target, offset, operand)
                : (long) LONG.compareAndExchange(target, offset, operand, sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_SWAP));
        srcSeg[0].set(JAVA_LONG, srcOff[0], original);
        qp.completeSend(index, CompletionStatus.SUCCESS, ErrorDetail.NONE, 8, false);
        return Outcome.DONE;
    }

    private long remoteAddress() {
        return sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_REMOTE_ADDR);
    }

    /** Resolves the request's rkey at the peer and checks it; null (with {@link #failure}) if refused. */
    private KeyedRange checkRemote(int needed, long bytes) {
        KeyedRange mr = peer.node().resolveRkey(sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_RKEY));
        failure = CHECK.remote(mr, remoteAddress(), bytes, needed);
        return failure == null ? mr : null;
    }

    /**
     * Resolves the request's local buffers (or its inline bytes) into the source list.
     *
     * @param nicWrites whether the NIC writes them (READ, atomics)
     * @return false (with {@link #failure}) if a key or range no longer checks out
     */
    private boolean gatherLocal(boolean nicWrites) {
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
            SwMemoryRegion mr = qp.nic().localMr(sq.get(JAVA_LONG, s + Layouts.Sge.OFF_LKEY));
            failure = CHECK.local(mr, addr, len, nicWrites);
            if (failure != null) {
                return false;
            }
            if (mr.isDevice()) {
                device = true;
                addSrc(null, mr.deviceAddress(addr), len);
            } else {
                addSrc(mr.hostMemory(), mr.hostOffset(addr), len);
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
    private void addRemoteDst(KeyedRange mr, long addr, int len) {
        if (mr.device() == null) {
            addDst(mr.hostMemory(), mr.hostOffset(addr), len);
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
     * @param retired why the copy fails when a peer's device memory was retired since the check
     * @return false (with {@link #failure}) if a device copy could not run
     */
    private boolean copy(Refusal retired) {
        if (device) {
            return deviceCopy(retired);
        }
        if (srcCount == 1 && dstCount == 1) {
            // The common small message: one buffer at each end, one copy, no walk through the lists (whose copy
            // call site is shared with device copies, so the JIT cannot inline it).
            long n = Math.min(srcLen[0], dstLen[0]);
            if (n > 0) {
                MemorySegment.copy(srcSeg[0], srcOff[0], dstSeg[0], dstOff[0], n);
            }
            return true;
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
    private boolean deviceCopy(Refusal retired) {
        DeviceSupport support = devices.current();
        synchronized (DeviceCopyLock.LOCK) {
            if (!localStillRegistered()) {
                return copyFailed(Refusal.BAD_LKEY);
            }
            for (int i = 0; i < peerDeviceCount; i++) {
                if (!peerDevice[i].isUsable()) {
                    ErrorDetail gone = peer.node().gone();
                    return copyFailed(gone != null ? new Refusal(CompletionStatus.RETRY_EXC_ERR, gone) : retired);
                }
            }
            if (support == null) {
                return copyFailed(DEVICE_COPY_FAILED);
            }
            try {
                support.begin();
                forEachPiece(support::copy);
                support.finish();
            } catch (RuntimeException e) {
                support.abort();
                NicDevices.LOG.log(System.Logger.Level.WARNING, "a device copy of queue pair " + qp.number() + " of "
                        + qp.nic().name() + " failed: " + e.getMessage());
                return copyFailed(DEVICE_COPY_FAILED);
            } finally {
                peerDeviceCount = 0;
            }
        }
        return true;
    }

    private static final Refusal DEVICE_COPY_FAILED = new Refusal(CompletionStatus.GENERAL_ERR, ErrorDetail.DEVICE_COPY_FAILED);

    /** Whether every local buffer of the request is still in a live registration (under the copy lock). */
    private boolean localStillRegistered() {
        int flags = sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS);
        if ((flags & SendFlags.INLINE) != 0) {
            return true;
        }
        int n = sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_NUM_SGE);
        for (int i = 0; i < n; i++) {
            long s = w + Layouts.Wqe.OFF_DATA + i * Layouts.Sge.SIZE;
            if (qp.nic().localMr(sq.get(JAVA_LONG, s + Layouts.Sge.OFF_LKEY)) == null) {
                return false;
            }
        }
        return true;
    }

    private boolean copyFailed(Refusal why) {
        failure = why;
        peerDeviceCount = 0;
        return false;
    }

    /**
     * Yes when a retry can change the outcome: the peer not yet verified (it may have connected) or unusable (the
     * retry fails the request), the timeout run out, or a receive posted at the slot the stalled send would claim.
     * {@link #stallSince} is the executors' (read here without their lock: a stale value moves the answer by a look).
     */
    @Override
    public boolean stallMayClear(long now) {
        if (!peerVerified || peer.unusable() != null) {
            return true;
        }
        long since = stallSince;
        if (since == 0 || now - since >= rnrTimeoutNanos) {
            return true;
        }
        ReceiveSlots r = peerReceives;
        return r.isPosted(r.claimed());
    }

    /** Yes: a retry over shared memory is a look at the peer's receive queue and a copy, cheap on any thread. */
    @Override
    public boolean retriesOnPollers() {
        return true;
    }

    /** The peer is not ready to receive: retry later, or fail once the receiver-not-ready timeout passed. */
    private Outcome stall(long index) {
        long now = System.nanoTime();
        if (stallSince == 0) {
            stallSince = now;
            return Outcome.STALLED;
        }
        if (now - stallSince < rnrTimeoutNanos) {
            return Outcome.STALLED;
        }
        stallSince = 0;
        return fail(index, CompletionStatus.RNR_RETRY_EXC_ERR, ErrorDetail.RNR_TIMEOUT);
    }

    private Outcome fail(long index, Refusal why) {
        return fail(index, why.status(), why.detail());
    }

    /** Fails the request and its queue pair; the peer may have an error completion of its own to see. */
    private Outcome fail(long index, CompletionStatus status, ErrorDetail detail) {
        stallSince = 0;
        qp.failRequest(index, status, detail);
        peer.node().wakeSleepers();
        return Outcome.DONE;
    }

    // ---- the peer ----

    @Override
    public long lastPeerReceive() {
        return lastPeerReceive;
    }

    @Override
    public ErrorDetail checkPeer(long now) {
        ErrorDetail why = peer.unusable();
        if (why == null && peer.stateCode() == QpState.READY.code()) {
            long connected = peer.connectedToken();
            if (connected != 0 && connected != qp.token()) {
                why = ErrorDetail.PEER_QP_ERROR;
            }
        }
        return why;
    }

    /** A peer that died mid-copy never finishes the receives it claimed here. */
    @Override
    public ErrorDetail unfinishedReceives(ErrorDetail queuePairError) {
        return peer.node().gone() == ErrorDetail.PEER_DEAD ? ErrorDetail.PEER_DEAD : null;
    }

    /** The peer reads this queue pair's state in its file: nothing to send. */
    @Override
    public void queuePairFailed() {
    }

    @Override
    public void close() {
        transport.release(peer.node());
    }

    @Override
    public String toString() {
        return peer.toString();
    }
}
