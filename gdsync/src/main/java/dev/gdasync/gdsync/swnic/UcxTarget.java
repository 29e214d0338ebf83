package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.swnic.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The target's half of the UCX transport: executes a peer's request against this NIC's own queue pair and
 * memory, with the checks of the shared-memory executor (keys, access, bounds, a posted receive), and
 * answers. It sees its own queue pair and memory-region table through the same views a shared-memory peer
 * uses ({@link RemoteQp}, {@link RemoteNode}), so receives are claimed and completed exactly as a local
 * peer's executor would. Runs on the UCX progress thread.
 *
 * <p>A request the target cannot take yet (its queue pair not connected, no receive posted) is answered
 * "not ready" and the initiator sends it again; a failed check is answered with the status and detail the
 * initiator's send CQE carries; nothing is written outside a checked range.
 */
final class UcxTarget {

    private final SoftwareNic nic;
    private final UcxNet net;

    UcxTarget(SoftwareNic nic, UcxNet net) {
        this.nic = nic;
        this.net = net;
    }

    /**
     * Where to answer a request, and the request's identity. The target's own instance is reused for every
     * request answered during its handler; a transfer that ends later (by rendezvous) keeps a copy.
     */
    private final class Answer {
        /** UCX's reply endpoint of the message being handled, or 0. */
        private long replyEp;
        /** The queue pair's link when the request comes from its connected peer, else null. */
        private UcxLink link;
        private long to;
        private long from;
        private long sequence;

        Answer set(long replyEp, UcxLink link, long to, long from, long sequence) {
            this.replyEp = replyEp;
            this.link = link;
            this.to = to;
            this.from = from;
            this.sequence = sequence;
            return this;
        }

        Answer copy() {
            return new Answer().set(0, link, to, from, sequence);
        }

        void send(CompletionStatus status, ErrorDetail detail, int length, long operand, long data, long dataLength) {
            MemorySegment h = UcxWire.start(net.takeHeader(), UcxWire.RESPONSE, to, from);
            UcxWire.u8(h, UcxWire.OFF_STATUS, status.code());
            h.set(UcxWire.INT, UcxWire.OFF_DETAIL, detail.code());
            h.set(UcxWire.LONG, UcxWire.OFF_SEQUENCE, sequence);
            h.set(UcxWire.LONG, UcxWire.OFF_OPERAND, operand);
            h.set(UcxWire.INT, UcxWire.OFF_LENGTH, length);
            if (link != null) {
                net.sendNow(link.peer(), h, UcxWire.SIZE, data, dataLength, null, null, false);
            } else if (replyEp != 0) {
                // Only from within the message handler: UCX's reply endpoint lives as long as the message.
                net.sendNow(replyEp, h, data, dataLength);
            } else {
                net.releaseHeader(h);
            }
        }

        /** Executed, nothing to return: acknowledged later, on the link's next request if one goes soon. */
        void ok(int length) {
            if (link != null) {
                link.owe(sequence, length);
            } else {
                send(CompletionStatus.SUCCESS, ErrorDetail.NONE, length, 0, 0, 0);
            }
        }

        void error(CompletionStatus status, ErrorDetail detail) {
            send(status, detail, 0, 0, 0, 0);
        }

        /** Not ready: the initiator retries until its receiver-not-ready timeout. */
        void notReady() {
            send(CompletionStatus.RNR_RETRY_EXC_ERR, ErrorDetail.RNR_TIMEOUT, 0, 0, 0, 0);
        }
    }

    private final Answer answer = new Answer();
    /** The destination of an eager transfer; a rendezvous transfer gets its own. */
    private final UcxPieces pieces = new UcxPieces();

    /**
     * Executes a request and answers it; under the worker's turn, within the message's handler.
     *
     * @param h       the request's header
     * @param data    its payload
     * @param replyEp UCX's endpoint to answer on, or 0
     */
    void onRequest(MemorySegment h, UcxNet.AmData data, long replyEp) {
        long to = h.get(UcxWire.LONG, UcxWire.OFF_TO);
        long from = h.get(UcxWire.LONG, UcxWire.OFF_FROM);
        long seq = h.get(UcxWire.LONG, UcxWire.OFF_SEQUENCE);
        ShmQueuePair qp = net.queuePair(to);
        UcxLink link = qp == null ? null : qp.ucxLink();
        boolean fromPeer = link != null && link.peerToken() == from;
        Answer answer = this.answer.set(replyEp, fromPeer ? link : null, from, to, seq);
        if (fromPeer) {
            link.heard();
            long acked = h.get(UcxWire.LONG, UcxWire.OFF_ACK);
            if (acked != 0) {
                // The request also acknowledges this queue pair's own request in flight: complete that first.
                link.onResponse(acked - 1, CompletionStatus.SUCCESS, ErrorDetail.NONE,
                        h.get(UcxWire.INT, UcxWire.OFF_ACK_LENGTH), 0, null);
            }
        }
        if (qp == null) {
            answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_CLOSED);
            return;
        }
        QpState state = qp.state();
        if (state == QpState.CLOSED) {
            answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_CLOSED);
            return;
        }
        if (state == QpState.RESET || link == null) {
            answer.notReady(); // this queue pair has not connected yet
            return;
        }
        if (!fromPeer) {
            answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            return;
        }
        if (state == QpState.ERROR) {
            answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            return;
        }
        Opcode op;
        try {
            op = Opcode.ofCode(UcxWire.u8(h, UcxWire.OFF_OPCODE));
        } catch (IllegalArgumentException e) {
            answer.error(CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.MALFORMED_REQUEST);
            return;
        }
        if (op != Opcode.SEND && op != Opcode.SEND_WITH_IMM && h.byteSize() < UcxWire.SIZE) {
            answer.error(CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.MALFORMED_REQUEST); // its remote fields are missing
            return;
        }
        RemoteQp self = qp.selfView();
        int length = h.get(UcxWire.INT, UcxWire.OFF_LENGTH);
        switch (op) {
            case SEND, SEND_WITH_IMM -> send(qp, self, h, data, answer, op, length);
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> write(qp, self, h, data, answer, op, length);
            case RDMA_READ -> read(self, h, answer, length);
            case ATOMIC_FETCH_ADD, ATOMIC_CMP_SWAP -> atomic(self, h, answer, op);
        }
    }

    private void send(ShmQueuePair qp, RemoteQp self, MemorySegment h, UcxNet.AmData data, Answer answer, Opcode op, int length) {
        long slot = self.claimed();
        if (!self.isPosted(slot)) {
            answer.notReady();
            return;
        }
        MemorySegment q = self.segment();
        long e = self.rqe(slot);
        long recvWrId = q.get(JAVA_LONG, e + Layouts.Rqe.OFF_WR_ID);
        int n = q.get(JAVA_INT, e + Layouts.Rqe.OFF_NUM_SGE);
        UcxPieces dst = pieces;
        dst.clear();
        boolean valid = n >= 0 && n <= UcxPieces.MAX;
        ErrorDetail why = ErrorDetail.RECV_BUFFER_INVALID;
        for (int i = 0; valid && i < n; i++) {
            long s = e + Layouts.Rqe.OFF_SGE + i * Layouts.Sge.SIZE;
            long addr = q.get(JAVA_LONG, s + Layouts.Sge.OFF_ADDR);
            int len = q.get(JAVA_INT, s + Layouts.Sge.OFF_LENGTH);
            RemoteNode.ResolvedMr mr = self.node().resolveLkey(q.get(JAVA_LONG, s + Layouts.Sge.OFF_LKEY));
            if (mr == null || (mr.access() & Access.LOCAL_WRITE) == 0 || !mr.contains(addr, len)) {
                valid = false;
            } else if (mr == RemoteNode.UNREACHABLE || mr.device() != null) {
                valid = false;
                why = ErrorDetail.DEVICE_OVER_UCX;
            } else {
                dst.add(mr.region(), mr.segmentOffset(addr), len);
            }
        }
        int imm = h.get(UcxWire.INT, UcxWire.OFF_IMM);
        boolean hasImm = op == Opcode.SEND_WITH_IMM;
        if (!valid || length > dst.capacity) {
            ErrorDetail detail = valid ? ErrorDetail.RECV_TOO_SMALL : why;
            if (self.claim(slot)) {
                self.complete(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV,
                        valid ? CompletionStatus.LOC_LEN_ERR : CompletionStatus.LOC_PROT_ERR, detail);
            }
            answer.error(valid ? CompletionStatus.REM_INV_REQ_ERR : CompletionStatus.REM_OP_ERR, detail);
            return;
        }
        if (!self.claim(slot)) {
            answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            return;
        }
        Received done = new Received(qp, self, slot, recvWrId, length, imm, hasImm, CompletionOpcode.RECV,
                ErrorDetail.RECV_BUFFER_INVALID);
        deliver(data, length, dst, answer, done);
    }

    private void write(ShmQueuePair qp, RemoteQp self, MemorySegment h, UcxNet.AmData data, Answer answer, Opcode op,
                       int length) {
        long raddr = h.get(UcxWire.LONG, UcxWire.OFF_REMOTE);
        RemoteNode.ResolvedMr mr = checkRemote(self, h, Access.REMOTE_WRITE, length, answer);
        if (mr == null) {
            return;
        }
        boolean withImm = op == Opcode.RDMA_WRITE_WITH_IMM;
        long slot = 0;
        long recvWrId = 0;
        if (withImm) {
            slot = self.claimed();
            if (!self.isPosted(slot)) {
                answer.notReady();
                return;
            }
            recvWrId = self.segment().get(JAVA_LONG, self.rqe(slot) + Layouts.Rqe.OFF_WR_ID);
            if (!self.claim(slot)) {
                answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
                return;
            }
        }
        UcxPieces dst = pieces;
        dst.clear();
        dst.add(mr.region(), mr.segmentOffset(raddr), length);
        Received done = withImm ? new Received(qp, self, slot, recvWrId, length, h.get(UcxWire.INT, UcxWire.OFF_IMM), true,
                CompletionOpcode.RECV_RDMA_WITH_IMM, ErrorDetail.BAD_RKEY) : null;
        deliver(data, length, dst, answer, done);
    }

    /**
     * The receive a transfer completes (a SEND's, or a WRITE with immediate's), and the detail a transfer that
     * fails gives it. Null for a plain WRITE, which completes no receive.
     */
    private record Received(ShmQueuePair qp, RemoteQp self, long slot, long wrId, int length, int imm, boolean hasImm,
                            CompletionOpcode opcode, ErrorDetail failDetail) {
        /** @return whether the receive completed (the queue pair is still ready) */
        boolean complete() {
            return qp.completeClaimedWhileReady(self, slot, wrId, length, imm, hasImm, opcode, CompletionStatus.SUCCESS,
                    ErrorDetail.NONE);
        }

        void fail() {
            qp.completeClaimedWhileReady(self, slot, wrId, 0, 0, false, opcode, CompletionStatus.GENERAL_ERR, failDetail);
        }
    }

    /** The payload is in place: complete the receive, if any, and answer. */
    private static void delivered(Answer answer, Received received, int length) {
        if (received == null || received.complete()) {
            answer.ok(length);
        } else {
            answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
        }
    }

    /** The payload could not be placed: fail the receive, if any, and answer. */
    private static void undelivered(Answer answer, Received received) {
        if (received != null) {
            received.fail();
            answer.error(CompletionStatus.REM_OP_ERR, received.failDetail());
        } else {
            answer.error(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
        }
    }

    private void read(RemoteQp self, MemorySegment h, Answer answer, int length) {
        RemoteNode.ResolvedMr mr = checkRemote(self, h, Access.REMOTE_READ, length, answer);
        if (mr == null) {
            return;
        }
        long from = mr.region().address() + mr.segmentOffset(h.get(UcxWire.LONG, UcxWire.OFF_REMOTE));
        answer.send(CompletionStatus.SUCCESS, ErrorDetail.NONE, length, 0, length > 0 ? from : 0, length);
    }

    private void atomic(RemoteQp self, MemorySegment h, Answer answer, Opcode op) {
        RemoteNode.ResolvedMr mr = checkRemote(self, h, Access.REMOTE_ATOMIC, 8, answer);
        if (mr == null) {
            return;
        }
        long raddr = h.get(UcxWire.LONG, UcxWire.OFF_REMOTE);
        long offset = mr.segmentOffset(raddr);
        if ((raddr & 7) != 0 || ((mr.region().address() + offset) & 7) != 0) {
            answer.error(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.REMOTE_MISALIGNED);
            return;
        }
        long operand = h.get(UcxWire.LONG, UcxWire.OFF_OPERAND);
        long original = op == Opcode.ATOMIC_FETCH_ADD
                ? (long) LONG.getAndAdd(mr.region(), offset, operand)
                : (long) LONG.compareAndExchange(mr.region(), offset, operand, h.get(UcxWire.LONG, UcxWire.OFF_SWAP));
        answer.send(CompletionStatus.SUCCESS, ErrorDetail.NONE, 8, original, 0, 0);
    }

    /** Resolves and checks the request's rkey; null (answered already) if refused. */
    private RemoteNode.ResolvedMr checkRemote(RemoteQp self, MemorySegment h, int needed, long bytes, Answer answer) {
        RemoteNode.ResolvedMr mr = self.node().resolveRkey(h.get(UcxWire.LONG, UcxWire.OFF_RKEY));
        ErrorDetail why = null;
        if (mr == null) {
            why = ErrorDetail.BAD_RKEY;
        } else if (mr == RemoteNode.UNREACHABLE || mr.device() != null) {
            why = ErrorDetail.DEVICE_OVER_UCX;
        } else if ((mr.access() & needed) != needed) {
            why = ErrorDetail.REMOTE_ACCESS_DENIED;
        } else if (!mr.contains(h.get(UcxWire.LONG, UcxWire.OFF_REMOTE), bytes)) {
            why = ErrorDetail.REMOTE_OUT_OF_BOUNDS;
        }
        if (why != null) {
            answer.error(why == ErrorDetail.DEVICE_OVER_UCX && needed == Access.REMOTE_ATOMIC
                    ? CompletionStatus.REM_INV_REQ_ERR : CompletionStatus.REM_ACCESS_ERR, why);
            return null;
        }
        return mr;
    }

    /**
     * Moves the payload into the destination pieces, then completes and answers: from UCX's buffer when it came
     * eagerly, else received by rendezvous (straight into a single piece, or into a buffer that is then scattered)
     * and completed when that receive ends.
     */
    private void deliver(UcxNet.AmData data, int length, UcxPieces dst, Answer answer, Received received) {
        if (length == 0) {
            delivered(answer, received, 0);
            return;
        }
        if (data.length != length) {
            undelivered(answer, received);
            return;
        }
        if (!data.rendezvous) {
            dst.scatterFrom(data.bytes());
            delivered(answer, received, length);
            return;
        }
        Answer later = answer.copy();
        boolean direct = dst.count == 1;
        UcxPieces pieces = direct ? null : dst.copy();
        MemorySegment temp = direct ? null : Arena.ofAuto().allocate(length);
        long target = direct ? dst.seg[0].address() + dst.off[0] : temp.address();
        net.receive(data, target, ok -> {
            if (!ok) {
                undelivered(later, received);
                return;
            }
            if (!direct) {
                pieces.scatterFrom(temp);
            }
            delivered(later, received, length);
        });
    }
}
