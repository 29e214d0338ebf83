package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;

/**
 * A communication failed or did not finish in time. The message names the peer, the operation and what
 * was awaited; {@link #status()} and {@link #detail()} carry the NIC's verdict when there is one.
 */
public final class MpException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The completion status, or null for a timeout. */
    private final CompletionStatus status;
    /** Why the NIC failed the request, or null. */
    private final ErrorDetail detail;

    /**
     * @param message what failed
     * @param status  the completion status, or null for a timeout
     * @param detail  why, or null
     */
    public MpException(String message, CompletionStatus status, ErrorDetail detail) {
        super(message);
        this.status = status;
        this.detail = detail;
    }

    /** @return the completion status, or null when no completion arrived (a timeout) */
    public CompletionStatus status() {
        return status;
    }

    /** @return why the completion failed, or null */
    public ErrorDetail detail() {
        return detail;
    }
}
