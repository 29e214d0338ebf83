package dev.gdasync.gdsync.mlx5.verbs;

/**
 * A verbs call failed, or the verbs path cannot be used here (no library, no device). The message names the call,
 * its errno or return value and what it means, and what to do where that is known.
 */
public final class VerbsException extends RuntimeException {
    private final String call;
    private final int errno;

    /**
     * @param call    the failed call ({@code ibv_reg_mr}), or what could not be done
     * @param errno   the errno value the call reported, or 0 when there is none
     * @param message the whole message
     */
    VerbsException(String call, int errno, String message) {
        super(message);
        this.call = call;
        this.errno = errno;
    }

    /**
     * A call that returns a pointer returned NULL and set errno.
     *
     * @param call  the call and what it was called on ({@code ibv_alloc_pd(mlx5_0)})
     * @param errno errno after the call
     * @param hint  what the failure likely means and what to do, or null
     * @return the exception
     */
    static VerbsException ofErrno(String call, int errno, String hint) {
        return new VerbsException(call, errno, call + " failed: errno " + errno + " (" + Errno.describe(errno) + ")"
                + (hint == null ? "" : "; " + hint));
    }

    /**
     * A call that returns an int returned non-zero: rdma-core returns an errno value, or -1 with errno set.
     *
     * @param call  the call and what it was called on
     * @param rc    the return value
     * @param errno errno after the call (read when {@code rc} is -1)
     * @param hint  what the failure likely means and what to do, or null
     * @return the exception
     */
    static VerbsException ofReturn(String call, int rc, int errno, String hint) {
        int code = rc < 0 ? errno : rc;
        String how = rc < 0 ? "returned " + rc + " with errno " + errno : "returned " + rc;
        return new VerbsException(call, code, call + " failed: " + how + " (" + Errno.describe(code) + ")"
                + (hint == null ? "" : "; " + hint));
    }

    /** @return the failed call's name and subject, as the message starts */
    public String call() {
        return call;
    }

    /** @return the errno value of the failure, or 0 when there is none */
    public int errno() {
        return errno;
    }
}
