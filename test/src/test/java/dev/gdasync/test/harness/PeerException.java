package dev.gdasync.test.harness;

/** A peer operation failed: the API call threw (locally, or in the child, whose message this carries). */
public final class PeerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause   the local cause, or null for a failure reported by a child
     */
    public PeerException(String message, Throwable cause) {
        super(message, cause);
    }
}
