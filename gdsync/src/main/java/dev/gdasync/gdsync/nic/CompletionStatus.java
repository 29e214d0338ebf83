package dev.gdasync.gdsync.nic;

/** Status of a completion, with the values of verbs' {@code ibv_wc_status}. */
public enum CompletionStatus {
    /** The work request completed. */
    SUCCESS(0),
    /** A receive buffer was too small for the incoming message. */
    LOC_LEN_ERR(1),
    /** The local queue pair could not execute the request (for example, a malformed request). */
    LOC_QP_OP_ERR(2),
    /** A local buffer failed its key, bounds or access check. */
    LOC_PROT_ERR(4),
    /** The queue pair was in the error state; the request was not executed. */
    WR_FLUSH_ERR(5),
    /** The peer rejected the request as invalid (for example, a message longer than its receive buffer). */
    REM_INV_REQ_ERR(9),
    /** The peer's memory failed the rkey, bounds or access check; nothing was written there. */
    REM_ACCESS_ERR(10),
    /** The peer could not complete the request (for example, its receive buffer is no longer registered). */
    REM_OP_ERR(11),
    /** The peer is gone: its process died, it closed, or its queue pair is in the error state. */
    RETRY_EXC_ERR(12),
    /** The peer posted no receive within the receiver-not-ready timeout. */
    RNR_RETRY_EXC_ERR(13),
    /** Any other error. */
    GENERAL_ERR(21);

    private final int code;

    CompletionStatus(int code) {
        this.code = code;
    }

    /** @return the verbs value */
    public int code() {
        return code;
    }

    /**
     * @param code a value from {@link #code()}
     * @return the status
     * @throws IllegalArgumentException if unknown
     */
    public static CompletionStatus ofCode(int code) {
        CompletionStatus s = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
        if (s == null) {
            throw new IllegalArgumentException("unknown completion status " + code);
        }
        return s;
    }

    private static final CompletionStatus[] BY_CODE = new CompletionStatus[32];

    static {
        for (CompletionStatus s : values()) {
            BY_CODE[s.code] = s;
        }
    }
}
