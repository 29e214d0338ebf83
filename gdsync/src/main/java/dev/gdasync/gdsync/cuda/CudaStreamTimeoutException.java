package dev.gdasync.gdsync.cuda;

/**
 * A CUDA stream made no progress for its wait policy's timeout: no event reached, no host task started or
 * ended. The message names the stream, the time, and what it still had queued (waits with their word's
 * current value). It is the cause of the stream's {@link dev.gdasync.gdsync.stream.StreamFailedException}.
 */
public final class CudaStreamTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what timed out and what was queued */
    public CudaStreamTimeoutException(String message) {
        super(message);
    }
}
