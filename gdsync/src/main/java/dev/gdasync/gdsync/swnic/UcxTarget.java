package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRequest;

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

    /** Where to answer a request, and the request's identity. */
    private final class Answer {
        private final UcpEndpoint replyEp;
        private final UcxNet.UcxPeer peer;
        private final long to;
        private final long from;
        private final long sequence;

        Answer(UcpEndpoint replyEp, UcxNet.UcxPeer peer, long to, long from, long sequence) {
            this.replyEp = replyEp;
            this.peer = peer;
            this.to = to;
            this.from = from;
            this.sequence = sequence;
        }

        void send(CompletionStatus status, ErrorDetail detail, int length, long operand, long data, long dataLength) {
            MemorySegment h = UcxWire.header(UcxWire.RESPONSE, to, from);
            UcxWire.u8(h, UcxWire.OFF_STATUS, status.code());
            h.set(UcxWire.INT, UcxWire.OFF_DETAIL, detail.code());
            h.set(UcxWire.LONG, UcxWire.OFF_SEQUENCE, sequence);
            h.set(UcxWire.LONG, UcxWire.OFF_OPERAND, operand);
            h.set(UcxWire.INT, UcxWire.OFF_LENGTH, length);
            if (peer != null) {
                net.send(peer, h, data, dataLength, h, m -> { });
            } else {
                // Only from within the message handler: UCX's reply endpoint lives as long as the message.
                replyEp.sendAmNonBlocking(UcxWire.AM_ID, h.address(), h.byteSize(), data, dataLength, 0,
                        new UcxCallback() {
                            @SuppressWarnings("unused")
                            private final Object held = h;
                        });
            }
        }

        void ok(int length) {
            send(CompletionStatus.SUCCESS, ErrorDetail.NONE, length, 0, 0, 0);
        }

        void error(CompletionStatus status, ErrorDetail detail) {
            send(status, detail, 0, 0, 0, 0);
        }

        /** Not ready: the initiator retries until its receiver-not-ready timeout. */
        void notReady() {
            send(CompletionStatus.RNR_RETRY_EXC_ERR, ErrorDetail.RNR_TIMEOUT, 0, 0, 0, 0);
        }
    }

    void onRequest(MemorySegment h, UcpAmData data, UcpEndpoint replyEp) {
        long to = h.get(UcxWire.LONG, UcxWire.OFF_TO);
        long from = h.get(UcxWire.LONG, UcxWire.OFF_FROM);
        long seq = h.get(UcxWire.LONG, UcxWire.OFF_SEQUENCE);
        ShmQueuePair qp = nic.queuePairByToken(to);
        UcxLink link = qp == null ? null : qp.ucxLink();
        Answer answer = new Answer(replyEp, link != null && link.peerToken() == from ? link.peer() : null, from, to, seq);
        if (link != null && link.peerToken() == from) {
            link.heard();
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
        if (link.peerToken() != from) {
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
        RemoteQp self = qp.selfView();
        int length = h.get(UcxWire.INT, UcxWire.OFF_LENGTH);
        switch (op) {
            case SEND, SEND_WITH_IMM -> send(qp, self, h, data, answer, op, length);
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> write(qp, self, h, data, answer, op, length);
            case RDMA_READ -> read(self, h, answer, length);
            case ATOMIC_FETCH_ADD, ATOMIC_CMP_SWAP -> atomic(self, h, answer, op);
        }
    }

    private void send(ShmQueuePair qp, RemoteQp self, MemorySegment h, UcpAmData data, Answer answer, Opcode op, int length) {
        long slot = self.claimed();
        if (!self.isPosted(slot)) {
            answer.notReady();
            return;
        }
        MemorySegment q = self.segment();
        long e = self.rqe(slot);
        long recvWrId = q.get(JAVA_LONG, e + Layouts.Rqe.OFF_WR_ID);
        int n = q.get(JAVA_INT, e + Layouts.Rqe.OFF_NUM_SGE);
        UcxPieces dst = new UcxPieces();
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
        deliver(data, length, dst, () -> {
            if (qp.completeClaimedWhileReady(() -> self.complete(slot, recvWrId, length, imm, hasImm, CompletionOpcode.RECV,
                    CompletionStatus.SUCCESS, ErrorDetail.NONE))) {
                answer.ok(length);
            } else {
                answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            }
        }, () -> {
            qp.completeClaimedWhileReady(() -> self.complete(slot, recvWrId, 0, 0, false, CompletionOpcode.RECV,
                    CompletionStatus.GENERAL_ERR, ErrorDetail.RECV_BUFFER_INVALID));
            answer.error(CompletionStatus.REM_OP_ERR, ErrorDetail.RECV_BUFFER_INVALID);
        });
    }

    private void write(ShmQueuePair qp, RemoteQp self, MemorySegment h, UcpAmData data, Answer answer, Opcode op,
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
        UcxPieces dst = new UcxPieces();
        dst.add(mr.region(), mr.segmentOffset(raddr), length);
        long s = slot;
        long wrId = recvWrId;
        int imm = h.get(UcxWire.INT, UcxWire.OFF_IMM);
        deliver(data, length, dst, () -> {
            if (!withImm || qp.completeClaimedWhileReady(() -> self.complete(s, wrId, length, imm, true,
                    CompletionOpcode.RECV_RDMA_WITH_IMM, CompletionStatus.SUCCESS, ErrorDetail.NONE))) {
                answer.ok(length);
            } else {
                answer.error(CompletionStatus.RETRY_EXC_ERR, ErrorDetail.PEER_QP_ERROR);
            }
        }, () -> {
            if (withImm) {
                qp.completeClaimedWhileReady(() -> self.complete(s, wrId, 0, 0, false, CompletionOpcode.RECV_RDMA_WITH_IMM,
                        CompletionStatus.GENERAL_ERR, ErrorDetail.BAD_RKEY));
            }
            answer.error(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
        });
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
     * Moves the payload into the destination pieces: from UCX's buffer when it came eagerly, else received by
     * rendezvous (straight into a single piece, or into a buffer that is then scattered).
     */
    @SuppressWarnings("restricted") // UCX's eager data: native memory of the given length
    private void deliver(UcpAmData data, int length, UcxPieces dst, Runnable done, Runnable failed) {
        if (length == 0) {
            done.run();
            return;
        }
        if (data == null || data.getLength() != length) {
            failed.run();
            return;
        }
        if (data.isDataValid()) {
            dst.scatterFrom(MemorySegment.ofAddress(data.getDataAddress()).reinterpret(length));
            done.run();
            return;
        }
        boolean direct = dst.count == 1;
        MemorySegment temp = direct ? null : Arena.ofAuto().allocate(length);
        long target = direct ? dst.seg[0].address() + dst.off[0] : temp.address();
        data.receive(target, new UcxCallback() {
            @Override
            public void onSuccess(UcpRequest request) {
                if (!direct) {
                    dst.scatterFrom(temp);
                }
                done.run();
            }

            @Override
            public void onError(int status, String message) {
                failed.run();
            }
        });
    }
}
