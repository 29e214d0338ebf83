package dev.gdasync.gdsync.gdrcopy;

/**
 * A GDRCopy call failed, or GDRCopy cannot be used on this machine. The message names the call and its
 * arguments, the library's result as an errno name and number (for example {@code EINVAL (22)}), and what
 * to do.
 */
public final class GdrException extends RuntimeException {
    /** {@link #result()} when the failure is not a result of the library (no library, {@code gdr_open} NULL). */
    public static final int NO_RESULT = -1;

    /** The library's result, or {@link #NO_RESULT}. */
    private final int result;

    /**
     * @param message what failed and what to do
     * @param result  the library's result, or {@link #NO_RESULT}
     */
    public GdrException(String message, int result) {
        super(message);
        this.result = result;
    }

    /**
     * Throws if a call did not succeed.
     *
     * @param result the call's result: 0 for success, otherwise an errno value
     * @param call   the call and its arguments, for the message
     * @throws GdrException if {@code result} is not 0
     */
    static void check(int result, String call) {
        if (result != 0) {
            throw of(result, call);
        }
    }

    /**
     * @param result a failed call's result
     * @param call   the call and its arguments
     * @return {@code "<call> failed with <ERRNO> (<code>): <what to do>"}
     */
    static GdrException of(int result, String call) {
        return new GdrException(GdrResults.describe(result, call), result);
    }

    /** @return the library's result (an errno value), or {@link #NO_RESULT} */
    public int result() {
        return result;
    }
}
