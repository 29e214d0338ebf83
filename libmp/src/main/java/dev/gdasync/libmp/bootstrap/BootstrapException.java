package dev.gdasync.libmp.bootstrap;

/** A bootstrap collective failed: a rank is gone, a connection was refused or broke, or time ran out. */
public final class BootstrapException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what failed, naming the rank and the collective */
    public BootstrapException(String message) {
        super(message);
    }

    /**
     * @param message what failed
     * @param cause   the underlying error
     */
    public BootstrapException(String message, Throwable cause) {
        super(message, cause);
    }
}
