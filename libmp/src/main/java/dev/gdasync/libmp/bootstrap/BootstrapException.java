package dev.gdasync.libmp.bootstrap;

import dev.gdasync.libmp.MpException;

/**
 * A bootstrap failed: a collective lost a rank, a connection was refused or broke, time ran out, or the job's
 * environment is incomplete or malformed. An {@link MpException} (with no completion status or detail), since an
 * error of the job's bootstrap during a library call is a failure of that call, as in MPI and NVSHMEM; see
 * docs/decisions.md, "Exception types".
 */
public final class BootstrapException extends MpException {
    private static final long serialVersionUID = 1L;

    /** @param message what failed, naming the rank and the collective */
    public BootstrapException(String message) {
        super(message, null);
    }

    /**
     * @param message what failed
     * @param cause   the underlying error
     */
    public BootstrapException(String message, Throwable cause) {
        super(message, cause);
    }
}
