package dev.gdasync.gdsync.swnic.ucx;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.swnic.core.AccessChecker;
import dev.gdasync.gdsync.swnic.core.MrTable;
import dev.gdasync.gdsync.swnic.core.ReceiveSlots;
import dev.gdasync.gdsync.swnic.core.Refusal;
import dev.gdasync.gdsync.swnic.core.SwMemoryRegion;
import dev.gdasync.gdsync.swnic.core.SwQueuePair;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;

/**
 * The target's half of the UCX transport: executes a peer's request against this NIC's own queue pair and
 * memory, checked by the one {@link AccessChecker} (keys, access, bounds, a posted receive; host memory only),
 * and answers. It claims and completes receives through the queue pair's {@link ReceiveSlots}, exactly as a
 * shared-memory peer's executor does in the peer's mapping. Runs under the UCX worker's turn.
 *
 * <p>A request the target cannot take yet (its queue pair not connected, no receive posted) is answered
 * "not ready" and the initiator sends it again; a failed check is answered with the status and detail the
 * initiator's send CQE carries; nothing is written outside a checked range.
 */
final class UcxTarget {
    private static final AccessChecker CHECK = AccessChecker.HOST_MEMORY_ONLY;

    private final UcxTransport net;

    UcxTarget(UcxTransport net) {
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
        private UcxConnection link;
        private long to;
        private long from;
        private long sequence;

        Answer set(long replyEp, UcxConnection link, long to, long from, long sequence) {
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
    void onRequest(MemorySegment h, UcxTransport.AmData data, long replyEp) {
        long to = h.get(UcxWire.LONG, UcxWire.OFF_TO);
        long from = h.get(UcxWire.LONG, UcxWire.OFF_FROM);
        long seq = h.get(UcxWire.LONG, UcxWire.OFF_SEQUENCE);
        UcxConnection link = net.connection(to);
        SwQueuePair qp = link != null ? link.queuePair() : net.nic().queuePairByToken(to);
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
        MrTable keys = qp.nic().mrTable();
        int length = h.get(UcxWire.INT, UcxWire.OFF_LENGTH);
        switch (op) {
            case SEND, SEND_WITH_IMM -> send(qp, keys, h, data, answer, op, length);
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> write(qp, keys, h, data, answer, op, length);
            case RDMA_READ -> read(keys, h, answer, length);
            case ATOMIC_FETCH_ADD, ATOMIC_CMP_SWAP -> atomic(keys, h, answer, op);
        }
    }

    private void send(SwQueuePair qp, MrTable keys, MemorySegment h, UcxTransport.AmData data, Answer answer, Opcode op,
                      int length) {
        ReceiveSlots self = qp.receiveSlots();
        long slot = self.claimed();
        if (!self.isPosted(slot)) {
            answer.notReady();
            return;
        }
        long recvWrId = self.wrId(slot);
        int n = self.bufferCount(slot);
        UcxPieces dst = pieces;
        dst.clear();
        Refusal refused = n >= 0 && n <= UcxPieces.MAX ? null : Refusal.RECV_BUFFER_INVALID;
        for (int i = 0; refused == null && i < n; i++) {
            long addr = self.bufferAddress(slot, i);
            int len = self.bufferLength(slot, i);
            SwMemoryRegion mr = keys.byLkey(self.bufferLkey(slot, i));
            refused = CHECK.receiveBuffer(mr, addr, len);
            if (refused == null) {
                dst.add(mr.hostMemory(), mr.hostOffset(addr), len);
            }
        }
        if (refused == null && length > dst.capacity) {
            refused = Refusal.RECV_TOO_SMALL;
        }
        int imm = h.get(UcxWire.INT, UcxWire.OFF_IMM);
        boolean hasImm = op == Opcode.SEND_WITH_IMM;
        if (refused != null) {
            if (self.claim(slot)) {
                qp.completeReceiveWhileReady(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV, refused.receiverStatus(),
                        refused.detail());
            }
            answer.error(refused.status(), refused.detail());
            return;
        }
        if (!self.claim(slot)) {
            answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            return;
        }
        Received done = new Received(qp, slot, recvWrId, length, imm, hasImm, CompletionOpcode.RECV,
                ErrorDetail.RECV_BUFFER_INVALID);
        deliver(data, length, dst, answer, done);
    }

    private void write(SwQueuePair qp, MrTable keys, MemorySegment h, UcxTransport.AmData data, Answer answer, Opcode op,
                       int length) {
        long raddr = h.get(UcxWire.LONG, UcxWire.OFF_REMOTE);
        SwMemoryRegion mr = checkRemote(keys, h, Access.REMOTE_WRITE, length, answer);
        if (mr == null) {
            return;
        }
        boolean withImm = op == Opcode.RDMA_WRITE_WITH_IMM;
        long slot = 0;
        long recvWrId = 0;
        if (withImm) {
            ReceiveSlots self = qp.receiveSlots();
            slot = self.claimed();
            if (!self.isPosted(slot)) {
                answer.notReady();
                return;
            }
            recvWrId = self.wrId(slot);
            if (!self.claim(slot)) {
                answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
                return;
            }
        }
        UcxPieces dst = pieces;
        dst.clear();
        dst.add(mr.hostMemory(), mr.hostOffset(raddr), length);
        Received done = withImm ? new Received(qp, slot, recvWrId, length, h.get(UcxWire.INT, UcxWire.OFF_IMM), true,
                CompletionOpcode.RECV_RDMA_WITH_IMM, ErrorDetail.BAD_RKEY) : null;
        deliver(data, length, dst, answer, done);
    }

    /**
     * The receive a transfer completes (a SEND's, or a WRITE with immediate's), and the detail a transfer that
     * fails gives it. Null for a plain WRITE, which completes no receive.
     */
    private record Received(SwQueuePair qp, long slot, long wrId, int length, int imm, boolean hasImm,
                            CompletionOpcode opcode, ErrorDetail failDetail) {
        /** @return whether the receive completed (the queue pair is still ready) */
        boolean complete() {
            return qp.completeReceiveWhileReady(slot, wrId, length, imm, hasImm, opcode, CompletionStatus.SUCCESS,
                    ErrorDetail.NONE);
        }

        void fail() {
            qp.completeReceiveWhileReady(slot, wrId, 0, 0, false, opcode, CompletionStatus.GENERAL_ERR, failDetail);
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

    private void read(MrTable keys, MemorySegment h, Answer answer, int length) {
        SwMemoryRegion mr = checkRemote(keys, h, Access.REMOTE_READ, length, answer);
        if (mr == null) {
            return;
        }
        long from = mr.hostMemory().address() + mr.hostOffset(h.get(UcxWire.LONG, UcxWire.OFF_REMOTE));
        answer.send(CompletionStatus.SUCCESS, ErrorDetail.NONE, length, 0, length > 0 ? from : 0, length);
    }

    private void atomic(MrTable keys, MemorySegment h, Answer answer, Opcode op) {
        SwMemoryRegion mr = checkRemote(keys, h, Access.REMOTE_ATOMIC, 8, answer);
        if (mr == null) {
            return;
        }
        long offset = mr.hostOffset(h.get(UcxWire.LONG, UcxWire.OFF_REMOTE));
        MemorySegment target = mr.hostMemory();
        long operand = h.get(UcxWire.LONG, UcxWire.OFF_OPERAND);
        long original = op == Opcode.ATOMIC_FETCH_ADD
                ? (long) LONG.getAndAdd(target, offset, operand)
                : (long) LONG.compareAndExchange(target, offset, operand, h.get(UcxWire.LONG, UcxWire.OFF_SWAP));
        answer.send(CompletionStatus.SUCCESS, ErrorDetail.NONE, 8, original, 0, 0);
    }

    /** Resolves this NIC's rkey the request names and checks the access; null (answered already) if refused. */
    private SwMemoryRegion checkRemote(MrTable keys, MemorySegment h, int needed, long bytes, Answer answer) {
        SwMemoryRegion mr = keys.byRkey(h.get(UcxWire.LONG, UcxWire.OFF_RKEY));
        Refusal refused = CHECK.remote(mr, h.get(UcxWire.LONG, UcxWire.OFF_REMOTE), bytes, needed);
        if (refused != null) {
            answer.error(refused.status(), refused.detail());
            return null;
        }
        return mr;
    }

    /**
     * Moves the payload into the destination pieces, then completes and answers: from UCX's buffer when it came
     * eagerly, else received by rendezvous (straight into a single piece, or into a buffer that is then scattered)
     * and completed when that receive ends.
     */
    private void deliver(UcxTransport.AmData data, int length, UcxPieces dst, Answer answer, Received received) {
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
