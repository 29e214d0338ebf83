package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;

/**
 * A communication failed or did not finish in time. The message names the peer, the operation and what
 * was awaited; {@link #status()} and {@link #detail()} carry the NIC's verdict when there is one.
 *
 * <p>A failure of the job's bootstrap (a collective that lost a rank or timed out, a job environment that is
 * malformed) is a {@link dev.gdasync.libmp.bootstrap.BootstrapException}, a subclass with neither status nor detail:
 * catching MpException catches every failure of the library's communication, whichever layer reports it (see
 * docs/decisions.md, "Exception types").
 */
public class MpException extends RuntimeException {
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

    /**
     * For subclasses whose failures have no NIC verdict.
     *
     * @param message what failed
     * @param cause   the underlying error, or null
     */
    protected MpException(String message, Throwable cause) {
        super(message, cause);
        this.status = null;
        this.detail = null;
    }

    /** @return the completion status, or null when no completion arrived (a timeout, a bootstrap failure) */
    public CompletionStatus status() {
        return status;
    }

    /** @return why the completion failed, or null */
    public ErrorDetail detail() {
        return detail;
    }
}
