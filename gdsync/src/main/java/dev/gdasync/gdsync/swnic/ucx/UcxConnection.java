package dev.gdasync.gdsync.swnic.ucx;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.swnic.core.AccessChecker;
import dev.gdasync.gdsync.swnic.core.Connection;
import dev.gdasync.gdsync.swnic.core.HostIdentity;
import dev.gdasync.gdsync.swnic.core.Layouts;
import dev.gdasync.gdsync.swnic.core.NicCore;
import dev.gdasync.gdsync.swnic.core.Refusal;
import dev.gdasync.gdsync.swnic.core.SwEndpoint;
import dev.gdasync.gdsync.swnic.core.SwMemoryRegion;
import dev.gdasync.gdsync.swnic.core.SwQueuePair;

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
final class UcxConnection implements Connection {
    private static final AccessChecker CHECK = AccessChecker.HOST_MEMORY_ONLY;

    private final SwQueuePair qp;
    private final UcxTransport net;
    private final UcxTransport.UcxPeer peer;
    private final long peerToken;
    private final long rnrTimeoutNanos;
    private final long answerTimeoutNanos;

    // Under the queue pair's execution lock.
    private long inFlight = -1;
    private long stallSince;
    /** The request's local buffers: the payload's sources, or where a READ's bytes or an atomic's value go. */
    private final UcxPieces local = new UcxPieces();

    // The request being sent, set under the execution lock and read by the send task (under the worker's turn).
    private int reqOpcode;
    private int reqFlags;
    private long reqSequence;
    private long reqRemote;
    private long reqRkey;
    private long reqOperand;
    private long reqSwap;
    private int reqImm;
    private int reqLength;
    private long reqData;
    private long reqDataLength;
    private Object reqKeep;
    private final Runnable sendRequest = this::sendRequest;

    // Under the worker's turn: the acknowledgement owed to the peer for its last request, if any.
    private long ackDue;
    private int ackLength;
    private boolean ackQueued;
    /** The acknowledgement owed when the progress thread last looked ({@link #ackStale}). */
    private long ackLooked;

    private volatile String failure;
    private volatile ErrorDetail peerEnded;

    // Time is kept by the agent's sweep, not per message (the message path reads no clock).
    /** Messages heard from the peer's queue pair (its heartbeats arrive while it idles); counted under the turn. */
    private long heardCount;
    /** Whether the peer's queue pair was heard from at all: until then requests ask for a reply endpoint. */
    private boolean peerHeard;
    /**
     * The send in flight as the sweep sees it: a serial number that every send (a resend after "not ready" too)
     * takes anew, -1 for none. A plain copy.
     */
    private long inFlightForSweep = -1;
    private long sends;
    private long sweepHeardCount;
    private long sweepLastHeard = System.nanoTime();
    private long sweepInFlight = -1;
    private long sweepInFlightSince;
    /** Set by the sweep when the peer stayed silent, or left a request unanswered, for the timeout. */
    private volatile boolean unanswered;
    private long lastPing;
    /** How often an idle link sends a heartbeat. */
    static final long PING_NANOS = 250_000_000L;

    /** The peer's process when it runs on this machine (another network namespace), else null. */
    private final long peerPid;
    private final long peerStartMillis;
    private final boolean peerOnThisMachine;
    private int livenessChecks;

    UcxConnection(SwQueuePair qp, UcxTransport net, UcxTransport.UcxPeer peer, SwEndpoint ep) {
        this.qp = qp;
        this.net = net;
        this.peer = peer;
        this.peerToken = ep.token();
        this.peerPid = ep.pid();
        this.peerStartMillis = ep.startMillis();
        this.peerOnThisMachine = HostIdentity.sameMachine(ep.hostId());
        this.rnrTimeoutNanos = qp.nic().settings().rnrTimeout().toNanos();
        // An answer takes a round trip; a peer that gives none within the RNR timeout is taken as unreachable.
        this.answerTimeoutNanos = rnrTimeoutNanos;
    }

    long peerToken() {
        return peerToken;
    }

    /** @return the local queue pair */
    SwQueuePair queuePair() {
        return qp;
    }

    /** @return whether a request is in flight (under the execution lock) */
    @Override
    public boolean inFlight() {
        return inFlight >= 0;
    }

    /**
     * Executes send queue entry {@code index}: checks it, sends it as a request.
     *
     * @return {@link Outcome#IN_FLIGHT} when sent, {@link Outcome#DONE} when it failed here
     */
    @Override
    public Outcome execute(long index) {
        long w = qp.wqe(index);
        MemorySegment sq = qp.segment();
        Opcode op;
        try {
            op = Opcode.ofCode(sq.get(JAVA_BYTE, w + Layouts.Wqe.OFF_OPCODE) & 0xff);
        } catch (IllegalArgumentException e) {
            return fail(index, CompletionStatus.LOC_QP_OP_ERR, ErrorDetail.MALFORMED_REQUEST);
        }
        ErrorDetail why = unusable();
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
                SwMemoryRegion mr = qp.nic().localMr(sq.get(JAVA_LONG, s + Layouts.Sge.OFF_LKEY));
                Refusal refused = CHECK.local(mr, addr, len, writable);
                if (refused != null) {
                    return fail(index, refused.status(), refused.detail());
                }
                local.add(mr.hostMemory(), mr.hostOffset(addr), len);
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
        reqOpcode = op.code();
        reqFlags = flags;
        reqSequence = index;
        reqRemote = sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_REMOTE_ADDR);
        reqRkey = sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_RKEY);
        reqOperand = sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_COMPARE_ADD);
        reqSwap = sq.get(JAVA_LONG, w + Layouts.Wqe.OFF_SWAP);
        reqImm = sq.get(JAVA_INT, w + Layouts.Wqe.OFF_IMM);
        reqLength = length;
        reqData = carriesPayload ? data : 0;
        reqDataLength = carriesPayload ? length : 0;
        reqKeep = keep;
        inFlight = index;
        inFlightForSweep = sends++;
        net.withTurn(sendRequest);
        return Outcome.IN_FLIGHT;
    }

    /** Sends the request {@link #execute} set up, with the acknowledgement owed to the peer if any; under the turn. */
    private void sendRequest() {
        MemorySegment h = UcxWire.start(net.takeHeader(), UcxWire.REQUEST, peerToken, qp.token());
        UcxWire.u8(h, UcxWire.OFF_OPCODE, reqOpcode);
        UcxWire.u8(h, UcxWire.OFF_FLAGS, reqFlags);
        h.set(UcxWire.LONG, UcxWire.OFF_SEQUENCE, reqSequence);
        boolean shortHeader = reqOpcode == Opcode.SEND.code() || reqOpcode == Opcode.SEND_WITH_IMM.code();
        if (!shortHeader) {
            h.set(UcxWire.LONG, UcxWire.OFF_REMOTE, reqRemote);
            h.set(UcxWire.LONG, UcxWire.OFF_RKEY, reqRkey);
            h.set(UcxWire.LONG, UcxWire.OFF_OPERAND, reqOperand);
            h.set(UcxWire.LONG, UcxWire.OFF_SWAP, reqSwap);
        }
        h.set(UcxWire.INT, UcxWire.OFF_IMM, reqImm);
        h.set(UcxWire.INT, UcxWire.OFF_LENGTH, reqLength);
        if (ackDue != 0) {
            h.set(UcxWire.LONG, UcxWire.OFF_ACK, ackDue);
            h.set(UcxWire.INT, UcxWire.OFF_ACK_LENGTH, ackLength);
            ackDue = 0;
        }
        net.sendNow(peer, h, shortHeader ? UcxWire.SHORT_SIZE : UcxWire.SIZE, reqData, reqDataLength, reqKeep, this,
                !peerHeard);
    }

    /**
     * This NIC's target executed the peer's request {@code sequence} successfully and has nothing to return: the
     * acknowledgement rides on this link's next request, or goes on its own when the worker has two quiet turns in
     * a row or the progress thread finds it still owed at its next look (LibMP's ping-pongs and exchanges answer
     * at once, so most need no message of their own). Under the turn.
     *
     * @param sequence the request's sequence
     * @param length   its byte count
     */
    void owe(long sequence, int length) {
        ackDue = sequence + 1;
        ackLength = length;
        if (!ackQueued) {
            ackQueued = true;
            net.ackDue(this);
        }
    }

    /**
     * @return whether the acknowledgement owed now was owed at the last call too (or none is owed: the link
     *         leaves the list of those due); under the turn
     */
    boolean ackStale() {
        boolean stale = ackDue == 0 || ackDue == ackLooked;
        ackLooked = ackDue;
        return stale;
    }

    /** Sends the acknowledgement owed, if it did not ride on a request meanwhile; under the turn. @return 1 if sent */
    int flushAck() {
        ackQueued = false;
        if (ackDue == 0) {
            return 0;
        }
        MemorySegment h = UcxWire.start(net.takeHeader(), UcxWire.RESPONSE, peerToken, qp.token());
        UcxWire.u8(h, UcxWire.OFF_STATUS, CompletionStatus.SUCCESS.code());
        h.set(UcxWire.LONG, UcxWire.OFF_SEQUENCE, ackDue - 1);
        h.set(UcxWire.INT, UcxWire.OFF_LENGTH, ackLength);
        ackDue = 0;
        net.sendNow(peer, h, UcxWire.SHORT_SIZE, 0, 0, null, null, false);
        return 1;
    }

    void sendFailed(String message) {
        if (failure == null) {
            failure = message;
        }
        qp.nic().wakeAgent();
    }

    /**
     * The answer to the request in flight (a response, or an acknowledgement on a request of the peer): completes
     * it (or stalls it), then runs what was rung since.
     *
     * @param seq      the request's sequence
     * @param status   how it ended
     * @param detail   why, when it failed
     * @param length   its byte count
     * @param original an atomic's original value
     * @param data     a READ's bytes, or null
     */
    void onResponse(long seq, CompletionStatus status, ErrorDetail detail, int length, long original, UcxTransport.AmData data) {
        heard();
        qp.lockExecution();
        try {
            if (inFlight != seq) {
                return; // a late answer to a request that was abandoned (the queue pair failed meanwhile)
            }
            Opcode op = Opcode.ofCode(qp.segment().get(JAVA_BYTE, qp.wqe(seq) + Layouts.Wqe.OFF_OPCODE) & 0xff);
            if (status == CompletionStatus.SUCCESS) {
                if (op == Opcode.RDMA_READ && length > 0 && data != null) {
                    if (data.length != length) {
                        finish(seq, CompletionStatus.GENERAL_ERR, ErrorDetail.MALFORMED_REQUEST, 0);
                        return;
                    }
                    if (data.rendezvous) {
                        // A large READ arrives by rendezvous: receive it, then finish when it has landed.
                        receiveRead(seq, data, length);
                        return;
                    }
                    local.scatterFrom(data.bytes());
                } else if (op.isAtomic()) {
                    local.seg[0].set(JAVA_LONG, local.off[0], original);
                }
                finish(seq, CompletionStatus.SUCCESS, ErrorDetail.NONE, length);
            } else if (status == CompletionStatus.RNR_RETRY_EXC_ERR && detail == ErrorDetail.RNR_TIMEOUT) {
                // Not ready (no receive posted, or not connected yet): stall until the timeout, the agent resends.
                inFlight = -1;
                inFlightForSweep = -1;
                long now = System.nanoTime();
                if (stallSince == 0) {
                    stallSince = now;
                }
                if (now - stallSince >= rnrTimeoutNanos) {
                    stallSince = 0;
                    finish(seq, CompletionStatus.RNR_RETRY_EXC_ERR, ErrorDetail.RNR_TIMEOUT, 0);
                } else {
                    qp.stalledInFlight();
                }
            } else {
                finish(seq, status, detail, 0);
            }
        } finally {
            qp.unlockExecution();
        }
        qp.ring();
    }

    /** Receives a rendezvous READ response; under the lock, then its landing takes the lock again. */
    private void receiveRead(long seq, UcxTransport.AmData data, int length) {
        boolean direct = local.count == 1;
        MemorySegment temp = direct ? null : Arena.ofAuto().allocate(length);
        long target = direct ? local.seg[0].address() + local.off[0] : temp.address();
        net.receive(data, target, ok -> {
            if (!ok) {
                sendFailed("UCX receive of a READ response failed");
                return;
            }
            qp.lockExecution();
            try {
                if (inFlight == seq) {
                    if (!direct) {
                        local.scatterFrom(temp);
                    }
                    finish(seq, CompletionStatus.SUCCESS, ErrorDetail.NONE, length);
                }
            } finally {
                qp.unlockExecution();
            }
            qp.ring();
        });
    }

    /** Completes the in-flight request; caller holds the lock. */
    private void finish(long seq, CompletionStatus status, ErrorDetail detail, int length) {
        inFlight = -1;
        inFlightForSweep = -1;
        stallSince = 0;
        if (status == CompletionStatus.SUCCESS) {
            qp.completeSend(seq, status, detail, length, false);
        } else {
            qp.failRequest(seq, status, detail);
        }
        qp.executedInFlight(seq);
    }

    private Outcome fail(long index, CompletionStatus status, ErrorDetail detail) {
        stallSince = 0;
        qp.failRequest(index, status, detail);
        return Outcome.DONE;
    }

    /** Drops the request in flight (the queue pair is failing it); caller holds the lock. */
    @Override
    public void abandon() {
        inFlight = -1;
        inFlightForSweep = -1;
        stallSince = 0;
    }

    /**
     * The peer's queue pair closed or failed.
     *
     * @param why {@link ErrorDetail#PEER_CLOSED} or {@link ErrorDetail#PEER_QP_ERROR}
     */
    void peerEnded(ErrorDetail why) {
        peerEnded = why;
        qp.nic().wakeAgent();
    }

    /**
     * @return why the peer cannot be reached (UCX failed, it closed, the sweep found it silent or a request
     *         unanswered for the timeout), or null
     */
    ErrorDetail unusable() {
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
        return unanswered ? ErrorDetail.PEER_UNREACHABLE : null;
    }

    /**
     * The agent's sweep of the link: notes whether the peer was heard from and how long the request in flight
     * has been, by the sweep's clock (so within one liveness interval of the timeout).
     *
     * @param now the clock
     * @return as {@link #unusable()}
     */
    private ErrorDetail sweep(long now) {
        long heard = heardCount;
        if (heard != sweepHeardCount) {
            sweepHeardCount = heard;
            sweepLastHeard = now;
        }
        long send = inFlightForSweep;
        if (send != sweepInFlight) {
            sweepInFlight = send;
            sweepInFlightSince = now;
        }
        // Unanswered for the timeout, or silence for the timeout: no answer and no heartbeat (a cut link, a
        // frozen host).
        if ((send >= 0 && now - sweepInFlightSince > answerTimeoutNanos) || now - sweepLastHeard > answerTimeoutNanos) {
            unanswered = true;
        }
        return unusable();
    }

    /**
     * The agent's sweep: a peer on this machine (in another network namespace) is checked by its pid, as
     * shared-memory peers are, which is faster than UCX's keepalives. Every tenth sweep, as the check reads /proc;
     * never on the path of a request.
     *
     * @return {@link ErrorDetail#PEER_DEAD} when the peer's process is gone, else null
     */
    private ErrorDetail checkLiveness() {
        if (peerOnThisMachine && ++livenessChecks % 10 == 0 && !ShmDirectory.isAlive(peerPid, peerStartMillis)) {
            return ErrorDetail.PEER_DEAD;
        }
        return null;
    }

    /** A message of the peer's queue pair arrived; under the turn. */
    void heard() {
        heardCount++;
        peerHeard = true;
    }

    /**
     * Sends a heartbeat when the last one is {@link #PING_NANOS} old; the agent's sweep calls it.
     *
     * @param now the clock
     */
    private void heartbeat(long now) {
        if (now - lastPing < PING_NANOS || peer.failure != null) {
            return;
        }
        lastPing = now;
        net.withTurn(() -> net.sendNow(peer, UcxWire.start(net.takeHeader(), UcxWire.PING, peerToken, qp.token()),
                UcxWire.SHORT_SIZE, 0, 0, null, null, false));
    }

    /** @return what UCX reported, if anything */
    private String failureMessage() {
        return peer.failure != null ? peer.failure : failure;
    }

    /**
     * The agent's sweep: a heartbeat when one is due, then whether the peer was silent or left a request
     * unanswered for the timeout, said it closed or failed, or (on this machine) is dead.
     */
    @Override
    public ErrorDetail checkPeer(long now) {
        heartbeat(now);
        ErrorDetail why = sweep(now);
        if (why == null) {
            why = checkLiveness();
        }
        if (why == ErrorDetail.PEER_UNREACHABLE && failureMessage() != null) {
            NicCore.LOG.log(System.Logger.Level.WARNING, qp + ": " + failureMessage());
        }
        return why;
    }

    /** This NIC's target claims receives for the peer's transfers: one waiting for data that will not come fails. */
    @Override
    public ErrorDetail unfinishedReceives(ErrorDetail queuePairError) {
        return queuePairError;
    }

    @Override
    public void queuePairFailed() {
        sendEnded(ErrorDetail.PEER_QP_ERROR);
    }

    @Override
    public void close() {
        net.forget(this);
        sendEnded(ErrorDetail.PEER_CLOSED);
    }

    /**
     * Tells the peer's queue pair that this one closed or failed (best effort), as a shared-memory peer sees it
     * in the queue pair's state.
     *
     * @param why {@link ErrorDetail#PEER_CLOSED} or {@link ErrorDetail#PEER_QP_ERROR}
     */
    private void sendEnded(ErrorDetail why) {
        if (peer.failure == null) {
            net.withTurn(() -> {
                flushAck(); // what the target executed is acknowledged before the close
                MemorySegment h = UcxWire.start(net.takeHeader(), UcxWire.CLOSE, peerToken, qp.token());
                h.set(UcxWire.INT, UcxWire.OFF_DETAIL, why.code());
                net.sendNow(peer, h, UcxWire.SHORT_SIZE, 0, 0, null, null, false);
            });
        }
    }

    UcxTransport.UcxPeer peer() {
        return peer;
    }

    @Override
    public String toString() {
        return "queue pair with token " + Long.toHexString(peerToken) + " over UCX (" + peer.name + ")";
    }
}
