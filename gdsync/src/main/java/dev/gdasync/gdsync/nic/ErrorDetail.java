package dev.gdasync.gdsync.nic;

/**
 * Why a completion failed, in more words than its {@link CompletionStatus}. Carried in every CQE so that
 * a user sees which check failed. The code is the ordinal: new details are added at the end.
 */
public enum ErrorDetail {
    /** No error. */
    NONE("no error"),
    /** The request was flushed because the queue pair is in the error state. */
    FLUSHED("flushed: the queue pair is in the error state"),
    /** The peer posted no receive within the receiver-not-ready timeout. */
    RNR_TIMEOUT("the peer posted no receive within the receiver-not-ready timeout"),
    /** The peer's process is gone. */
    PEER_DEAD("the peer's process is gone"),
    /** The peer closed its NIC or queue pair. */
    PEER_CLOSED("the peer closed its queue pair"),
    /** The peer's queue pair is in the error state. */
    PEER_QP_ERROR("the peer's queue pair is in the error state"),
    /** The rkey matches no registration at the peer (forged, stale or deregistered). */
    BAD_RKEY("the rkey matches no registered memory region at the peer"),
    /** The peer's memory region lacks the access flag the operation needs. */
    REMOTE_ACCESS_DENIED("the peer's memory region lacks the access flag the operation needs"),
    /** The remote range is not inside the peer's memory region. */
    REMOTE_OUT_OF_BOUNDS("the remote range is outside the peer's memory region"),
    /** An atomic's remote address is not 8-byte aligned. */
    REMOTE_MISALIGNED("the atomic's remote address is not 8-byte aligned"),
    /** A local lkey matches no registration (deregistered since the post). */
    BAD_LKEY("a local lkey matches no registered memory region"),
    /** A local memory region lacks LOCAL_WRITE for a buffer the NIC writes. */
    LOCAL_ACCESS_DENIED("a local memory region lacks LOCAL_WRITE"),
    /** A local buffer is not inside its memory region. */
    LOCAL_OUT_OF_BOUNDS("a local buffer is outside its memory region"),
    /** The message is longer than the receive buffers posted for it. */
    RECV_TOO_SMALL("the message is longer than the posted receive buffers"),
    /** A posted receive buffer at the peer failed its key, bounds or access check. */
    RECV_BUFFER_INVALID("a posted receive buffer failed its key, bounds or access check"),
    /** The work request could not be decoded. */
    MALFORMED_REQUEST("the work request could not be decoded"),
    /** An atomic's target or result buffer is device memory, which the software NIC cannot update atomically. */
    DEVICE_ATOMIC("atomics need host memory: the software NIC cannot update device memory atomically"),
    /**
     * The peer's device memory cannot be mapped into the executing process: CUDA IPC failed, or CUDA cannot be
     * used there. The executing process logs the driver's reason.
     */
    DEVICE_UNREACHABLE("the peer's device memory could not be mapped into the executing process (CUDA IPC failed or "
            + "CUDA is unavailable there)"),
    /** A CUDA copy to or from device memory failed; the executing process logs the driver's reason. */
    DEVICE_COPY_FAILED("a CUDA copy to or from device memory failed"),
    /**
     * Over UCX: the peer did not answer a request within the timeout (a cut link, a stuck peer), or UCX reported the
     * connection failed.
     */
    PEER_UNREACHABLE("the peer did not answer over UCX within the timeout, or UCX reported the connection failed"),
    /** Over UCX: the request names device memory, which the UCX transport does not carry. */
    DEVICE_OVER_UCX("GPU memory cannot travel over the UCX transport: use host memory, or peers on one host (shm)"),
    /** The queue pair was failed on purpose: its job failed (a rank is gone, or aborted the job). */
    JOB_FAILED("the job failed: a rank's process is gone, or a rank aborted the job");

    private static final ErrorDetail[] BY_CODE = values();

    private final String text;

    ErrorDetail(String text) {
        this.text = text;
    }

    /** @return the code stored in a CQE */
    public int code() {
        return ordinal();
    }

    /** @return a sentence for error messages */
    public String text() {
        return text;
    }

    /**
     * @param code a value from {@link #code()}
     * @return the detail, or {@link #MALFORMED_REQUEST} for an unknown code
     */
    public static ErrorDetail ofCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : MALFORMED_REQUEST;
    }
}
