package dev.gdasync.gdsync.stream;

/** A stream failed; {@link #getCause()} is what failed it first (a wait timeout, a task's exception). */
public final class StreamFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param stream the stream's name
     * @param cause  the original failure
     */
    public StreamFailedException(String stream, Throwable cause) {
        super("stream '" + stream + "' failed: " + cause, cause);
    }
}
