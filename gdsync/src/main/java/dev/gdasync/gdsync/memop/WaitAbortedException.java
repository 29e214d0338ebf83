package dev.gdasync.gdsync.memop;

/** A wait was abandoned because its executor is shutting down. */
public final class WaitAbortedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what stopped the wait */
    public WaitAbortedException(String message) {
        super(message);
    }
}
