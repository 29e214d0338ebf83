package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.trace.CompletionWrittenEvent;

import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A queue pair's receive queue and receive CQ as the executor of the peer's requests sees them: in a peer's
 * queue-pair file mapped here (shared memory), or in the queue pair's own file (requests that arrived over UCX).
 * The executor claims the next posted entry (a CAS on the claimed counter, which the owner's flusher also
 * advances), reads its buffers, and completes the entry into the receive CQE with the same index (recorded by the
 * flight recorder when it is on: the CQE's owner is the queue pair whose file this is).
 */
public final class ReceiveSlots {
    private final MemorySegment seg;
    private final Layouts.Qp layout;
    private final int qpn;
    private final int mask;

    /**
     * @param seg       the queue pair's file
     * @param layout    its layout
     * @param qpn       the queue pair's number (written into its CQEs)
     * @param recvDepth its receive queue depth
     */
    public ReceiveSlots(MemorySegment seg, Layouts.Qp layout, int qpn, int recvDepth) {
        this.seg = seg;
        this.layout = layout;
        this.qpn = qpn;
        this.mask = recvDepth - 1;
    }

    /** @return the next entry to claim: entries posted or claimed so far */
    public long claimed() {
        return (long) LONG.getVolatile(seg, Layouts.Qp.OFF_RQ_CLAIMED);
    }

    /**
     * Claims entry {@code index}.
     *
     * @param index the entry
     * @return false if someone else (the owner's flusher) claimed it first
     */
    public boolean claim(long index) {
        return LONG.compareAndSet(seg, Layouts.Qp.OFF_RQ_CLAIMED, index, index + 1);
    }

    /**
     * @param index an entry
     * @return whether it is posted
     */
    public boolean isPosted(long index) {
        return (int) INT.getAcquire(seg, entry(index) + Layouts.Rqe.OFF_SEQ) == (int) (index + 1);
    }

    /** @return the work request id of entry {@code index} */
    public long wrId(long index) {
        return seg.get(JAVA_LONG, entry(index) + Layouts.Rqe.OFF_WR_ID);
    }

    /** @return the number of buffers of entry {@code index}, as written (the caller bounds it) */
    public int bufferCount(long index) {
        return seg.get(JAVA_INT, entry(index) + Layouts.Rqe.OFF_NUM_SGE);
    }

    /** @return the address of buffer {@code i} of entry {@code index} */
    public long bufferAddress(long index, int i) {
        return seg.get(JAVA_LONG, sge(index, i) + Layouts.Sge.OFF_ADDR);
    }

    /** @return the lkey of buffer {@code i} of entry {@code index} (a key of the queue pair's owner) */
    public long bufferLkey(long index, int i) {
        return seg.get(JAVA_LONG, sge(index, i) + Layouts.Sge.OFF_LKEY);
    }

    /** @return the length of buffer {@code i} of entry {@code index} */
    public int bufferLength(long index, int i) {
        return seg.get(JAVA_INT, sge(index, i) + Layouts.Sge.OFF_LENGTH);
    }

    /**
     * Writes the receive CQE of entry {@code index}.
     *
     * @param index      the claimed entry
     * @param wrId       its work request id
     * @param byteLength the bytes that arrived
     * @param imm        the immediate value
     * @param hasImm     whether there is one
     * @param opcode     what completed
     * @param status     how
     * @param detail     why, when it failed
     */
    public void complete(long index, long wrId, int byteLength, int imm, boolean hasImm, CompletionOpcode opcode,
                         CompletionStatus status, ErrorDetail detail) {
        long off = layout.recvCq + (index & mask) * Layouts.Cqe.SIZE;
        // Begun before the write: the event's time is the moment the CQE became visible, not when it was committed.
        CompletionWrittenEvent event = new CompletionWrittenEvent();
        event.begin();
        Cqes.write(seg, off, index, wrId, byteLength, imm, hasImm, qpn, opcode, status, detail, index);
        if (event.shouldCommit()) {
            written(event, index, wrId, byteLength, opcode, status);
        }
    }

    /** Fills and commits the event, off {@link #complete}: its bytecode would count against the JIT's inlining budget. */
    private void written(CompletionWrittenEvent event, long index, long wrId, int byteLength, CompletionOpcode opcode,
                         CompletionStatus status) {
        event.provider = "swnic";
        event.queuePair = qpn;
        event.queuePairToken = seg.get(JAVA_LONG, Layouts.Qp.OFF_TOKEN);
        event.queue = "recv";
        event.index = index;
        event.opcode = opcode.name();
        event.status = status.name();
        event.bytes = byteLength;
        event.wrId = wrId;
        event.commit();
    }

    private long entry(long index) {
        return layout.rq + (index & mask) * Layouts.Rqe.SIZE;
    }

    private long sge(long index, int i) {
        return entry(index) + Layouts.Rqe.OFF_SGE + i * Layouts.Sge.SIZE;
    }
}
