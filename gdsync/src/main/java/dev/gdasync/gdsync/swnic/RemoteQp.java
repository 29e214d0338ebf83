package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.memory.ShmDirectory;

import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.swnic.Layouts.INT;
import static dev.gdasync.gdsync.swnic.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The peer's queue pair as the local executor sees it: its state, its receive queue (which local
 * SENDs consume) and its receive completion queue (which they complete).
 */
final class RemoteQp {
    private final RemoteNode node;
    private final MemorySegment seg;
    private final Layouts.Qp layout;
    private final int qpn;
    private final long token;
    private final int recvMask;

    RemoteQp(RemoteNode node, ShmEndpoint ep) {
        this.node = node;
        try {
            this.seg = ShmDirectory.mapExisting(ep.directory().resolve("qp-" + ep.qpn()), true, node.arena());
        } catch (UncheckedIOException e) {
            throw new IllegalArgumentException("queue pair " + ep.qpn() + " of " + node + " does not exist (closed?)", e);
        }
        this.layout = new Layouts.Qp(ep.sendDepth(), ep.recvDepth(), ep.sendCqDepth());
        if (seg.byteSize() < layout.size
                || seg.get(JAVA_LONG, Layouts.Qp.OFF_MAGIC) != Layouts.Qp.MAGIC
                || seg.get(JAVA_INT, Layouts.Qp.OFF_QPN) != ep.qpn()
                || seg.get(JAVA_LONG, Layouts.Qp.OFF_TOKEN) != ep.token()
                || seg.get(JAVA_INT, Layouts.Qp.OFF_SEND_DEPTH) != ep.sendDepth()
                || seg.get(JAVA_INT, Layouts.Qp.OFF_RECV_DEPTH) != ep.recvDepth()
                || seg.get(JAVA_INT, Layouts.Qp.OFF_SEND_CQ_DEPTH) != ep.sendCqDepth()) {
            throw new IllegalArgumentException("queue pair file " + ep.qpn() + " of " + node
                    + " does not match its endpoint descriptor (a stale descriptor?)");
        }
        this.qpn = ep.qpn();
        this.token = ep.token();
        this.recvMask = ep.recvDepth() - 1;
    }

    RemoteNode node() {
        return node;
    }

    int qpn() {
        return qpn;
    }

    long token() {
        return token;
    }

    /** @return the peer queue pair's state code */
    int stateCode() {
        return (int) INT.getAcquire(seg, Layouts.Qp.OFF_STATE);
    }

    /** @return the token of the queue pair the peer connected to, or 0 before it connected */
    long connectedToken() {
        return (long) LONG.getAcquire(seg, Layouts.Qp.OFF_REMOTE_TOKEN);
    }

    /** @return why the peer is not usable (gone, closed, in error), or null when it is READY */
    ErrorDetail unusable() {
        ErrorDetail gone = node.gone();
        if (gone != null) {
            return gone;
        }
        int s = stateCode();
        if (s == QpState.ERROR.code()) {
            return ErrorDetail.PEER_QP_ERROR;
        }
        if (s == QpState.CLOSED.code()) {
            return ErrorDetail.PEER_CLOSED;
        }
        return null;
    }

    /** @return receive entries the peer has posted or had claimed so far: the next one to claim */
    long claimed() {
        return (long) LONG.getVolatile(seg, Layouts.Qp.OFF_RQ_CLAIMED);
    }

    /**
     * Claims receive entry {@code index}.
     *
     * @return false if someone else (the peer's flusher) claimed it first
     */
    boolean claim(long index) {
        return LONG.compareAndSet(seg, Layouts.Qp.OFF_RQ_CLAIMED, index, index + 1);
    }

    /** @return whether receive entry {@code index} is posted */
    boolean isPosted(long index) {
        return (int) INT.getAcquire(seg, rqe(index) + Layouts.Rqe.OFF_SEQ) == (int) (index + 1);
    }

    long rqe(long index) {
        return layout.rq + (index & recvMask) * Layouts.Rqe.SIZE;
    }

    MemorySegment segment() {
        return seg;
    }

    /** Writes the peer's receive CQE for receive entry {@code index}. */
    void complete(long index, long wrId, int byteLength, int imm, boolean hasImm, CompletionOpcode opcode,
                  CompletionStatus status, ErrorDetail detail) {
        long off = layout.recvCq + (index & recvMask) * Layouts.Cqe.SIZE;
        Cqes.write(seg, off, index, wrId, byteLength, imm, hasImm, qpn, opcode, status, detail, index);
    }

    @Override
    public String toString() {
        return "queue pair " + qpn + " of " + node;
    }
}
