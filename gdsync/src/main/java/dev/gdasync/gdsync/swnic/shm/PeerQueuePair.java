package dev.gdasync.gdsync.swnic.shm;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.swnic.core.Layouts;
import dev.gdasync.gdsync.swnic.core.ReceiveSlots;
import dev.gdasync.gdsync.swnic.core.SwEndpoint;

import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The peer's queue pair as the local executor sees it, mapped from the peer's file: its state, the token it
 * connected to, and its receive queue and receive CQ (which local SENDs consume and complete).
 */
final class PeerQueuePair {
    private final PeerNode node;
    private final MemorySegment seg;
    private final int qpn;
    private final ReceiveSlots receives;

    PeerQueuePair(PeerNode node, SwEndpoint ep) {
        this.node = node;
        try {
            this.seg = ShmDirectory.mapExisting(ep.directory().resolve("qp-" + ep.qpn()), true, node.arena());
        } catch (UncheckedIOException e) {
            throw new IllegalArgumentException("queue pair " + ep.qpn() + " of " + node + " does not exist (closed?)", e);
        }
        Layouts.Qp layout = new Layouts.Qp(ep.sendDepth(), ep.recvDepth(), ep.sendCqDepth());
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
        this.receives = new ReceiveSlots(seg, layout, ep.qpn(), ep.recvDepth());
    }

    PeerNode node() {
        return node;
    }

    /** @return the peer's receive queue and receive CQ */
    ReceiveSlots receives() {
        return receives;
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

    @Override
    public String toString() {
        return "queue pair " + qpn + " of " + node;
    }
}
