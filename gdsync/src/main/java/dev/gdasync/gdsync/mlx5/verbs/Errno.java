package dev.gdasync.gdsync.mlx5.verbs;

/**
 * Names and meanings of the errno values verbs calls report, for messages. The values are Linux's generic ones,
 * the same on x86_64 and aarch64.
 */
final class Errno {
    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EINTR = 4;
    static final int EIO = 5;
    static final int ENXIO = 6;
    static final int EBADF = 9;
    static final int EAGAIN = 11;
    static final int ENOMEM = 12;
    static final int EACCES = 13;
    static final int EFAULT = 14;
    static final int EBUSY = 16;
    static final int EEXIST = 17;
    static final int ENODEV = 19;
    static final int EINVAL = 22;
    static final int EMFILE = 24;
    static final int ENOSPC = 28;
    static final int ERANGE = 34;
    static final int ENOSYS = 38;
    static final int ENODATA = 61;
    static final int EPROTO = 71;
    static final int EOPNOTSUPP = 95;
    static final int ENETUNREACH = 101;
    static final int ETIMEDOUT = 110;
    static final int EHOSTUNREACH = 113;

    private Errno() {
    }

    /**
     * @param errno an errno value
     * @return its name and meaning, {@code "EINVAL: invalid argument"}, or {@code "errno 1234"} for one not listed
     */
    static String describe(int errno) {
        return switch (errno) {
            case 0 -> "no errno (the library did not set one)";
            case EPERM -> "EPERM: operation not permitted";
            case ENOENT -> "ENOENT: no such file or directory";
            case EINTR -> "EINTR: interrupted system call";
            case EIO -> "EIO: input/output error";
            case ENXIO -> "ENXIO: no such device or address";
            case EBADF -> "EBADF: bad file descriptor";
            case EAGAIN -> "EAGAIN: resource temporarily unavailable";
            case ENOMEM -> "ENOMEM: out of memory";
            case EACCES -> "EACCES: permission denied";
            case EFAULT -> "EFAULT: bad address";
            case EBUSY -> "EBUSY: device or resource busy";
            case EEXIST -> "EEXIST: already exists";
            case ENODEV -> "ENODEV: no such device";
            case EINVAL -> "EINVAL: invalid argument";
            case EMFILE -> "EMFILE: too many open files";
            case ENOSPC -> "ENOSPC: no space left on device";
            case ERANGE -> "ERANGE: result out of range";
            case ENOSYS -> "ENOSYS: function not implemented";
            case ENODATA -> "ENODATA: no data available";
            case EPROTO -> "EPROTO: protocol error";
            case EOPNOTSUPP -> "EOPNOTSUPP: operation not supported";
            case ENETUNREACH -> "ENETUNREACH: network is unreachable";
            case ETIMEDOUT -> "ETIMEDOUT: timed out";
            case EHOSTUNREACH -> "EHOSTUNREACH: no route to host";
            default -> "errno " + errno;
        };
    }
}
