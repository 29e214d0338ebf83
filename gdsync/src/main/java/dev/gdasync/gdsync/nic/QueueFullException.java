package dev.gdasync.gdsync.nic;

/**
 * A work queue or completion queue has no room now. Nothing was posted; poll completions and retry.
 */
public final class QueueFullException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** @param message which queue is full and what frees it */
    public QueueFullException(String message) {
        super(message);
    }
}
