package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;

/**
 * Why an access was refused, as the work request's CQE says it: a status and its detail. The constants are every
 * refusal {@link AccessChecker} gives; executors never make their own.
 *
 * @param status the status of the initiator's CQE
 * @param detail the detail
 */
public record Refusal(CompletionStatus status, ErrorDetail detail) {
    /** A local lkey matches no live registration. */
    public static final Refusal BAD_LKEY = new Refusal(CompletionStatus.LOC_PROT_ERR, ErrorDetail.BAD_LKEY);
    /** A local buffer is outside its registration. */
    public static final Refusal LOCAL_OUT_OF_BOUNDS = new Refusal(CompletionStatus.LOC_PROT_ERR, ErrorDetail.LOCAL_OUT_OF_BOUNDS);
    /** A local buffer the NIC writes lacks LOCAL_WRITE. */
    public static final Refusal LOCAL_ACCESS_DENIED = new Refusal(CompletionStatus.LOC_PROT_ERR, ErrorDetail.LOCAL_ACCESS_DENIED);
    /** A local buffer is device memory the transport does not carry. */
    public static final Refusal LOCAL_DEVICE_NOT_CARRIED = new Refusal(CompletionStatus.LOC_QP_OP_ERR, ErrorDetail.DEVICE_OVER_UCX);
    /** An atomic's result buffer is device memory. */
    public static final Refusal LOCAL_DEVICE_ATOMIC = new Refusal(CompletionStatus.LOC_QP_OP_ERR, ErrorDetail.DEVICE_ATOMIC);
    /** The rkey matches no live registration of the peer. */
    public static final Refusal BAD_RKEY = new Refusal(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.BAD_RKEY);
    /** The peer's device memory cannot be mapped into the executing process. */
    public static final Refusal REMOTE_DEVICE_UNREACHABLE = new Refusal(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.DEVICE_UNREACHABLE);
    /** The remote range is device memory the transport does not carry. */
    public static final Refusal REMOTE_DEVICE_NOT_CARRIED = new Refusal(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.DEVICE_OVER_UCX);
    /** An atomic's target is device memory the transport does not carry. */
    public static final Refusal ATOMIC_DEVICE_NOT_CARRIED = new Refusal(CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.DEVICE_OVER_UCX);
    /** The peer's registration lacks the access flag. */
    public static final Refusal REMOTE_ACCESS_DENIED = new Refusal(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.REMOTE_ACCESS_DENIED);
    /** The remote range is outside the peer's registration. */
    public static final Refusal REMOTE_OUT_OF_BOUNDS = new Refusal(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.REMOTE_OUT_OF_BOUNDS);
    /** An atomic's target is device memory, which the NIC cannot update atomically. */
    public static final Refusal DEVICE_ATOMIC = new Refusal(CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.DEVICE_ATOMIC);
    /** An atomic's remote address is not 8-byte aligned. */
    public static final Refusal REMOTE_MISALIGNED = new Refusal(CompletionStatus.REM_ACCESS_ERR, ErrorDetail.REMOTE_MISALIGNED);
    /** A receive buffer the peer posted failed its key, bounds or access check. */
    public static final Refusal RECV_BUFFER_INVALID = new Refusal(CompletionStatus.REM_OP_ERR, ErrorDetail.RECV_BUFFER_INVALID);
    /** A receive buffer the peer posted is device memory that cannot be mapped into the executing process. */
    public static final Refusal RECV_DEVICE_UNREACHABLE = new Refusal(CompletionStatus.REM_OP_ERR, ErrorDetail.DEVICE_UNREACHABLE);
    /** A receive buffer the peer posted is device memory the transport does not carry. */
    public static final Refusal RECV_DEVICE_NOT_CARRIED = new Refusal(CompletionStatus.REM_OP_ERR, ErrorDetail.DEVICE_OVER_UCX);
    /** The message is longer than the receive buffers. */
    public static final Refusal RECV_TOO_SMALL = new Refusal(CompletionStatus.REM_INV_REQ_ERR, ErrorDetail.RECV_TOO_SMALL);

    /** @return the status of the receive CQE at the target, for a refused receive buffer */
    public CompletionStatus receiverStatus() {
        return detail == ErrorDetail.RECV_TOO_SMALL ? CompletionStatus.LOC_LEN_ERR : CompletionStatus.LOC_PROT_ERR;
    }
}
