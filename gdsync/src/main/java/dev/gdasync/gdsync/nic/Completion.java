package dev.gdasync.gdsync.nic;

import java.util.Objects;

/**
 * A completion read from a completion queue. Mutable and reusable: {@link CompletionQueue#poll} fills
 * it, so a polling loop allocates nothing.
 */
public final class Completion {
    private long wrId;
    private CompletionStatus status = CompletionStatus.SUCCESS;
    private CompletionOpcode opcode = CompletionOpcode.SEND;
    private ErrorDetail detail = ErrorDetail.NONE;
    private int byteLength;
    private int immediate;
    private boolean hasImmediate;
    private int queuePairNumber;
    private long index;

    /**
     * Fills every field; called by providers' completion queues.
     *
     * @param wrId            the work request id
     * @param status          the status
     * @param opcode          what completed
     * @param detail          why it failed, or {@link ErrorDetail#NONE}
     * @param byteLength      bytes received (receives) or transferred
     * @param immediate       the immediate value, if any
     * @param hasImmediate    whether an immediate value arrived
     * @param queuePairNumber the local queue pair
     * @param index           the absolute index of the CQE in its queue
     * @return this
     * @throws NullPointerException if the status, opcode or detail is null
     */
    public Completion set(long wrId, CompletionStatus status, CompletionOpcode opcode, ErrorDetail detail,
                          int byteLength, int immediate, boolean hasImmediate, int queuePairNumber, long index) {
        this.status = Objects.requireNonNull(status, "status must not be null");
        this.opcode = Objects.requireNonNull(opcode, "opcode must not be null");
        this.detail = Objects.requireNonNull(detail, "detail must not be null");
        this.wrId = wrId;
        this.byteLength = byteLength;
        this.immediate = immediate;
        this.hasImmediate = hasImmediate;
        this.queuePairNumber = queuePairNumber;
        this.index = index;
        return this;
    }

    /** @return the id of the work request this completes */
    public long wrId() {
        return wrId;
    }

    /** @return the status */
    public CompletionStatus status() {
        return status;
    }

    /** @return whether the status is {@link CompletionStatus#SUCCESS} */
    public boolean isSuccess() {
        return status == CompletionStatus.SUCCESS;
    }

    /** @return what completed */
    public CompletionOpcode opcode() {
        return opcode;
    }

    /** @return why the completion failed */
    public ErrorDetail detail() {
        return detail;
    }

    /** @return the bytes received or transferred */
    public int byteLength() {
        return byteLength;
    }

    /** @return the immediate value, meaningful when {@link #hasImmediate()} */
    public int immediate() {
        return immediate;
    }

    /** @return whether an immediate value arrived */
    public boolean hasImmediate() {
        return hasImmediate;
    }

    /** @return the local queue pair's number */
    public int queuePairNumber() {
        return queuePairNumber;
    }

    /** @return the absolute index of this CQE in its completion queue */
    public long index() {
        return index;
    }

    @Override
    public String toString() {
        return "Completion{wrId=" + wrId + ", status=" + status
                + (status == CompletionStatus.SUCCESS ? "" : " (" + detail.text() + ")")
                + ", opcode=" + opcode + ", bytes=" + byteLength
                + (hasImmediate ? ", imm=0x" + Integer.toHexString(immediate) : "")
                + ", qp=" + queuePairNumber + ", cqe=" + index + "}";
    }
}
