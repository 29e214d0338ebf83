package dev.gdasync.libmp.coll;

/** A collective failed: a peer sent what this rank did not expect, a transfer failed, or time ran out. */
public final class CollectiveException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, naming the communicator, the collective and the ranks
     * @param cause   the transfer's failure, or null
     */
    public CollectiveException(String message, Throwable cause) {
        super(message, cause);
    }
}
