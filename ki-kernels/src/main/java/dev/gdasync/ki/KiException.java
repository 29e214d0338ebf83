package dev.gdasync.ki;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;

/**
 * A KI kernel (on a GPU or on the host executor) ended with a failure: it recorded the first failed
 * descriptor in its table's status fields (a wait that timed out, an entry it could not use), the host aborted
 * it through those fields, or it could not be launched or did not end.
 */
public final class KiException extends RuntimeException {
    private final transient KiTable.Status status;

    /**
     * @param message what went wrong
     * @param status  the table's status, or null when the failure is not the kernel's report
     */
    public KiException(String message, KiTable.Status status) {
        super(message);
        this.status = status;
    }

    /**
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public KiException(String message, Throwable cause) {
        super(message, cause);
        this.status = null;
    }

    /**
     * Builds the exception for a table whose executor reported a failure.
     *
     * @param executor the executor's name, for the message
     * @param kernel   the kernel that ran
     * @param table    the table
     * @param status   its status (not OK)
     * @return the exception, naming the descriptor
     */
    public static KiException of(String executor, String kernel, KiTable table, KiTable.Status status) {
        if (status.code() == KiTableLayout.STATUS_ABORTED) {
            return new KiException(kernel + " on " + executor + " was aborted by the host (the job failed)", status);
        }
        String what = switch (status.code()) {
            case KiTableLayout.STATUS_TIMEOUT -> "timed out waiting on";
            case KiTableLayout.STATUS_INVALID -> "could not use";
            default -> "failed (code " + status.code() + ") on";
        };
        return new KiException(kernel + " on " + executor + " " + what + " " + table.describe(status.kind(), status.index()),
                status);
    }

    /** @return the table's status when the kernel reported the failure, else null */
    public KiTable.Status status() {
        return status;
    }
}
