package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.SendFlags;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpRequest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A queue pair's connection to its peer over UCX, and the initiator's half of the transport: each send queue
 * entry becomes a request message that the peer's NIC executes ({@link UcxTarget}); its response completes
 * the entry. One request is in flight per queue pair at a time, which keeps the entries in order as a
 * reliable connection does (and makes FENCE hold) without sequence windows; a response that says the peer
 * posted no receive yet (or has not connected) leaves the entry stalled, and the agent sends it again until
 * the receiver-not-ready timeout.
 *
 * <p>{@link #execute} runs under the queue pair's execution lock on the ringing thread or the agent;
 * {@link #onResponse} runs on the UCX progress thread and takes the same lock.
 */
final class UcxLink {
    private final ShmQueuePair qp;
    private final UcxNet net;
    private final UcxNet.UcxPeer peer;
    private final long peerToken;
    private final long rnrTimeoutNanos;
    private final long answerTimeoutNanos;

    // Under the queue pair's execution lock.
    private long inFlight = -1;
    private long stallSince;
    /** The request's local buffers: the payload's sources, or where a READ's bytes or an atomic's value go. */
    private final UcxPieces local = new UcxPieces();

    private volatile String failure;
    private volatile ErrorDetail peerEnded;
    private volatile long inFlightSince;
    /** When a message of the peer's queue pair last arrived (its heartbeats arrive while it idles). */
    private volatile long lastHeard = System.nanoTime();
    private long lastPing;
    /** How often an idle link sends a heartbeat. */
    static final long PING_NANOS = 250_000_000L;

    /** The peer's process when it runs on this machine (another network namespace), else null. */
    private final long peerPid;
    private final long peerStartMillis;
    private final boolean peerOnThisMachine;
    private int livenessChecks;

    UcxLink(ShmQueuePair qp, UcxNet net, UcxNet.UcxPeer peer, ShmEndpoint ep) {
        this.qp = qp;
        this.net = net;
        this.peer = peer;
        this.peerToken = ep.token();
        this.peerPid = ep.pid();
        this.peerStartMillis = ep.startMillis();
        this.peerOnThisMachine = HostIdentity.sameMachine(ep.hostId());
        this.rnrTimeoutNanos = qp.nic.config().rnrTimeout().toNanos();
        // An answer takes a round trip; a peer that gives none within the RNR timeout is taken as unreachable.
        this.answerTimeoutNanos = rnrTimeoutNanos;
    }

    long peerToken() {
        return peerToken;
    }

    /** @return whether a request is in flight (under the execution lock) */
    boolean inFlight() {
        return inFlight >= 0;
    }

    /**
     * Executes send queue entry {@code index}: checks it, sends it as a request.
     *
     * @return {@link WqeExecutor#IN_FLIGHT} when sent, {@link WqeExecutor#DONE} when it failed here
     */
    int execute(long index) {
        long w = qp.wqe(index);
        MemorySegment sq = qp.seg;
        Opcode op;
        try {
            op = Opcode.ofCode(sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_OPCODE) & 0xff);
        } catch (IllegalArgumentException e) {
            return fail(index, CompletionStatus.LOC_QP_OP_ERR, ErrorDetail.MALFORMED_REQUEST);
        }
        ErrorDetail why = unusable(System.nanoTime());
        if (why != null) {
            return fail(index, CompletionStatus.RETRY_EXC_ERR, why);
        }
        int flags = sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS);
        int length = sq.get(JAVA_INT, w + Layouts.Wqe.OFF_LENGTH);
        boolean carriesPayload = op == Opcode.SEND || op == Opcode.SEND_WITH_IMM || op == Opcode.RDMA_WRITE
                || op == Opcode.RDMA_WRITE_WITH_IMM;
        // The local buffers: the payload's sources, or where a READ's bytes and an atomic's original value go.
        local.clear();
        long data = 0;
        Object keep = null;
        if ((flags & SendFlags.INLINE) != 0) {
            // The inline bytes travel from a copy: the send queue entry may be reused before UCX is done.
            MemorySegment copy = Arena.ofAuto().allocate(Math.max(1, length));
            MemorySegment.copy(sq, w + Layouts.Wqe.OFF_DATA, copy, 0, length);
            data = copy.address();
            keep = copy;
        } else {
            int n = sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_NUM_SGE);
            boolean writable = !carriesPayload;
            for (int i = 0; i < n; i++) {
                long s = w + Layouts.Wqe.OFF_DATA + i * Layouts.Sge.SIZE;
                long addr = sq.get(JAVA_LONG, s + Layouts.Sge.OFF_ADDR);
                int len = sq.get(JAVA_INT, s + Layouts.Sge.OFF_LENGTH);
                ShmMemoryRegion mr = qp.nic.localMr(sq.get(JAVA_LONG, s + Layouts.Sge.OFF_LKEY));
                if (mr == null) {
                    return fail(index, CompletionStatus.LOC_PROT_ERR, ErrorDetail.BAD_LKEY);
                }
                if (!mr.contains(addr, len)) {
                    return fail(index, CompletionStatus.LOC_PROT_ERR, ErrorDetail.LOCAL_OUT_OF_BOUNDS);
                }
                if (writable && (mr.access() & Access.LOCAL_WRITE) == 0) {
                    return fail(index, CompletionStatus.LOC_PROT_ERR, ErrorDetail.LOCAL_ACCESS_DENIED);
                }
                if (mr.isDevice()) {
                    return fail(index, CompletionStatus.LOC_QP_OP_ERR, ErrorDetail.DEVICE_OVER_UCX);
                }
                local.add(mr.region().segment(), mr.offset() + (addr - mr.address()), len);
            }
            if (carriesPayload) {
                if (local.count == 1) {
                    data = local.seg[0].address() + local.off[0];
                } else if (local.count > 1) {
                    // A gather list travels as one message: gather it into a buffer the send keeps.
                    MemorySegment gathered = Arena.ofAuto().allocate(length);
                    local.gatherInto(gathered);
                    data = gathered.address();
                    keep = gathered;
                }
            }
        }
        MemorySegment h = UcxWire.header(UcxWire.REQUEST, peerToken, qp.token());
        UcxWire.u8(h, UcxWire.OFF_OPCODE, op.code());
        UcxWire.u8(h, UcxWire.OFF_FLAGS, flags);
        h.set(UcxWire.LONG, UcxWire.OFF_SEQUENCE, index);
        h.set(UcxWire.LONG, UcxWire.OFF_REMOTE, sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_REMOTE_ADDR));
        h.set(UcxWire.LONG, UcxWire.OFF_RKEY, sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_RKEY));
        h.set(UcxWire.LONG, UcxWire.OFF_OPERAND, sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_COMPARE_ADD));
        h.set(UcxWire.LONG, UcxWire.OFF_SWAP, sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_SWAP));
        h.set(UcxWire.INT, UcxWire.OFF_IMM, sq.get(JAVA_INT, w + Layouts.Wqe.OFF_IMM));
        h.set(UcxWire.INT, UcxWire.OFF_LENGTH, length);
        inFlight = index;
        inFlightSince = System.nanoTime();
        Object held = keep;
        net.send(peer, h, carriesPayload ? data : 0, carriesPayload ? length : 0, new Object[]{h, held}, this::sendFailed);
        return WqeExecutor.IN_FLIGHT;
    }

    private void sendFailed(String message) {
        if (failure == null) {
            failure = message;
        }
        qp.nic.wakeAgent();
    }

    /** The response to the request in flight: completes it (or stalls it), then runs what was rung since. */
    @SuppressWarnings("restricted") // UCX's eager data: native memory of the given length
    void onResponse(MemorySegment h, UcpAmData data) {
        heard();
        long seq = h.get(UcxWire.LONG, UcxWire.OFF_SEQUENCE);
        CompletionStatus status = CompletionStatus.ofCode(UcxWire.u8(h, UcxWire.OFF_STATUS));
        ErrorDetail detail = ErrorDetail.ofCode(h.get(UcxWire.INT, UcxWire.OFF_DETAIL));
        int length = h.get(UcxWire.INT, UcxWire.OFF_LENGTH);
        long original = h.get(UcxWire.LONG, UcxWire.OFF_OPERAND);
        qp.lockForTransport();
        try {
            if (inFlight != seq) {
                return; // a late answer to a request that was abandoned (the queue pair failed meanwhile)
            }
            Opcode op = Opcode.ofCode(qp.seg.get(JAVA_BYTE, qp.wqe(seq) + Layouts.Wqe.OFF_OPCODE) & 0xff);
            if (status == CompletionStatus.SUCCESS) {
                if (op == Opcode.RDMA_READ && length > 0) {
                    if (!data.isDataValid()) {
                        // A large READ arrives by rendezvous: receive it, then finish on the receive's callback.
                        receiveRead(seq, data, length);
                        return;
                    }
                    local.scatterFrom(MemorySegment.ofAddress(data.getDataAddress()).reinterpret(length));
                } else if (op.isAtomic()) {
                    local.seg[0].set(JAVA_LONG, local.off[0], original);
                }
                finish(seq, CompletionStatus.SUCCESS, ErrorDetail.NONE, length);
            } else if (status == CompletionStatus.RNR_RETRY_EXC_ERR && detail == ErrorDetail.RNR_TIMEOUT) {
                // Not ready (no receive posted, or not connected yet): stall until the timeout, the agent resends.
                inFlight = -1;
                inFlightSince = 0;
                long now = System.nanoTime();
                if (stallSince == 0) {
                    stallSince = now;
                }
                if (now - stallSince >= rnrTimeoutNanos) {
                    stallSince = 0;
                    finish(seq, CompletionStatus.RNR_RETRY_EXC_ERR, ErrorDetail.RNR_TIMEOUT, 0);
                } else {
                    qp.transportStalled();
                }
            } else {
                finish(seq, status, detail, 0);
            }
        } finally {
            qp.unlockForTransport();
        }
        qp.ring();
    }

    /** Receives a rendezvous READ response; under the lock, then the callback takes the lock again. */
    private void receiveRead(long seq, UcpAmData data, int length) {
        boolean direct = local.count == 1;
        MemorySegment temp = direct ? null : Arena.ofAuto().allocate(length);
        long target = direct ? local.seg[0].address() + local.off[0] : temp.address();
        data.receive(target, new UcxCallback() {
            @Override
            public void onSuccess(UcpRequest request) {
                qp.lockForTransport();
                try {
                    if (inFlight == seq) {
                        if (!direct) {
                            local.scatterFrom(temp);
                        }
                        finish(seq, CompletionStatus.SUCCESS, ErrorDetail.NONE, length);
                    }
                } finally {
                    qp.unlockForTransport();
                }
                qp.ring();
            }

            @Override
            public void onError(int ucxStatus, String message) {
                sendFailed("UCX receive of a READ response failed: " + message);
            }
        });
    }

    /** Completes the in-flight request; caller holds the lock. */
    private void finish(long seq, CompletionStatus status, ErrorDetail detail, int length) {
        inFlight = -1;
        inFlightSince = 0;
        stallSince = 0;
        if (status == CompletionStatus.SUCCESS) {
            qp.completeSend(seq, status, detail, length, false);
        } else {
            qp.completeSend(seq, status, detail, 0, true);
            qp.enterError(detail);
        }
        qp.transportExecuted(seq);
    }

    private int fail(long index, CompletionStatus status, ErrorDetail detail) {
        stallSince = 0;
        qp.completeSend(index, status, detail, 0, true);
        qp.enterError(detail);
        return WqeExecutor.DONE;
    }

    /** Drops the request in flight (the queue pair is failing it); caller holds the lock. */
    void abandon() {
        inFlight = -1;
        inFlightSince = 0;
        stallSince = 0;
    }

    /**
     * The peer's queue pair closed or failed.
     *
     * @param why {@link ErrorDetail#PEER_CLOSED} or {@link ErrorDetail#PEER_QP_ERROR}
     */
    void peerEnded(ErrorDetail why) {
        peerEnded = why;
        qp.nic.wakeAgent();
    }

    /**
     * @param now the clock
     * @return why the peer cannot be reached (UCX failed, it closed, it did not answer in time), or null
     */
    ErrorDetail unusable(long now) {
        // A peer that said it closed or failed explains a connection that drops after that.
        ErrorDetail ended = peerEnded;
        if (ended != null) {
            return ended;
        }
        if (peer.failure != null || failure != null) {
            // A dead process drops its connections: say so when the peer runs on this machine and is gone.
            return peerOnThisMachine && !ShmDirectory.isAlive(peerPid, peerStartMillis) ? ErrorDetail.PEER_DEAD
                    : ErrorDetail.PEER_UNREACHABLE;
        }
        long since = inFlightSince;
        if (since != 0 && now - since > answerTimeoutNanos) {
            return ErrorDetail.PEER_UNREACHABLE;
        }
        // Silence for the timeout: the peer neither answered nor sent a heartbeat (a cut link, a frozen host).
        if (now - lastHeard > answerTimeoutNanos) {
            return ErrorDetail.PEER_UNREACHABLE;
        }
        return null;
    }

    /**
     * The agent's sweep: a peer on this machine (in another network namespace) is checked by its pid, as
     * shared-memory peers are, which is faster than UCX's keepalives. Every tenth sweep, as the check reads /proc;
     * never on the path of a request.
     *
     * @return {@link ErrorDetail#PEER_DEAD} when the peer's process is gone, else null
     */
    ErrorDetail checkLiveness() {
        if (peerOnThisMachine && ++livenessChecks % 10 == 0 && !ShmDirectory.isAlive(peerPid, peerStartMillis)) {
            return ErrorDetail.PEER_DEAD;
        }
        return null;
    }

    /** A message of the peer's queue pair arrived. */
    void heard() {
        lastHeard = System.nanoTime();
    }

    /**
     * Sends a heartbeat when the last one is {@link #PING_NANOS} old; the agent's sweep calls it.
     *
     * @param now the clock
     */
    void heartbeat(long now) {
        if (now - lastPing < PING_NANOS || peer.failure != null) {
            return;
        }
        lastPing = now;
        MemorySegment h = UcxWire.header(UcxWire.PING, peerToken, qp.token());
        net.send(peer, h, 0, 0, h, m -> { });
    }

    /** @return what UCX reported, if anything */
    String failureMessage() {
        return peer.failure != null ? peer.failure : failure;
    }

    /**
     * Tells the peer's queue pair that this one closed or failed (best effort), as a shared-memory peer sees it
     * in the queue pair's state.
     *
     * @param why {@link ErrorDetail#PEER_CLOSED} or {@link ErrorDetail#PEER_QP_ERROR}
     */
    void sendEnded(ErrorDetail why) {
        MemorySegment h = UcxWire.header(UcxWire.CLOSE, peerToken, qp.token());
        h.set(UcxWire.INT, UcxWire.OFF_DETAIL, why.code());
        if (peer.failure == null) {
            net.send(peer, h, 0, 0, h, m -> { });
        }
    }

    UcxNet.UcxPeer peer() {
        return peer;
    }

    @Override
    public String toString() {
        return "queue pair with token " + Long.toHexString(peerToken) + " over UCX (" + peer.name + ")";
    }
}
