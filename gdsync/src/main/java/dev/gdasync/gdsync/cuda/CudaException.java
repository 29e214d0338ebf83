package dev.gdasync.gdsync.cuda;

/**
 * A CUDA driver call failed, or the driver cannot be used on this machine. The message says which call
 * failed, with the driver's result name (for example {@code CUDA_ERROR_NO_DEVICE (100)}), and what to do.
 */
public final class CudaException extends RuntimeException {
    /** {@link #result()} when the failure is not a driver result (no driver library, a driver too old). */
    public static final int NO_RESULT = -1;

    /** The driver's result code, or {@link #NO_RESULT}. */
    private final int result;

    /**
     * @param message what failed and what to do
     * @param result  the driver's result code, or {@link #NO_RESULT}
     */
    public CudaException(String message, int result) {
        super(message);
        this.result = result;
    }

    /**
     * @param message what failed and what to do
     * @param cause   the underlying failure
     */
    public CudaException(String message, Throwable cause) {
        super(message, cause);
        this.result = NO_RESULT;
    }

    /**
     * Throws if a driver call did not succeed.
     *
     * @param result the call's result code
     * @param call   the call, for the message (for example {@code "cuMemHostRegister(0x7f.., 4096 bytes)"})
     * @throws CudaException if {@code result} is not {@code CUDA_SUCCESS}
     */
    public static void check(int result, String call) {
        if (result != CudaResults.SUCCESS) {
            throw of(result, call);
        }
    }

    /**
     * Builds the exception for a failed call: {@code "<call> failed with <NAME> (<code>): <what to do>"}.
     *
     * @param result the call's result code, not {@code CUDA_SUCCESS}
     * @param call   the call, for the message
     * @return the exception
     */
    public static CudaException of(int result, String call) {
        return new CudaException(CudaResults.describe(result, call), result);
    }

    /** @return the driver's result code, or {@link #NO_RESULT} */
    public int result() {
        return result;
    }
}
