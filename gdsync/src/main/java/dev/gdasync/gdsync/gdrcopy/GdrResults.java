package dev.gdasync.gdsync.gdrcopy;

/**
 * Names and advice for GDRCopy's results. Every {@code int} call of {@code libgdrapi} returns 0 for
 * success, otherwise an errno value (mostly passed up from the gdrdrv kernel module's ioctls and from
 * {@code mmap}); the advice depends on the call, because the same errno means different things in each.
 */
final class GdrResults {
    /** What is appended to every message: libgdrapi prints its own reason only when asked to. */
    static final String LOGGING_HINT = "set GDRCOPY_ENABLE_LOGGING=1 for libgdrapi's own messages";

    private GdrResults() {
    }

    /**
     * @param result an errno value (the sign is ignored)
     * @return its Linux name and number, for example {@code EINVAL (22)}
     */
    static String name(int result) {
        String name = switch (Math.abs(result)) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 5 -> "EIO";
            case 9 -> "EBADF";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 14 -> "EFAULT";
            case 16 -> "EBUSY";
            case 19 -> "ENODEV";
            case 22 -> "EINVAL";
            case 25 -> "ENOTTY";
            case 28 -> "ENOSPC";
            case 95 -> "EOPNOTSUPP";
            default -> "error";
        };
        return name + " (" + result + ")";
    }

    /**
     * @param result a failed call's result
     * @param call   the call and its arguments, starting with the function's name
     * @return the whole message
     */
    static String describe(int result, String call) {
        return call + " failed with " + name(result) + ": " + advice(result, call);
    }

    private static String advice(int result, String call) {
        int errno = Math.abs(result);
        if (call.startsWith("gdr_pin_buffer")) {
            return switch (errno) {
                case 22 -> "the range is not device memory from cuMemAlloc/cudaMalloc (managed, host and registered "
                        + "memory cannot be pinned), or it runs past the end of its allocation; " + LOGGING_HINT;
                case 12, 28 -> "the GPU's BAR1 space (or kernel memory) is exhausted: unpin buffers no longer needed; "
                        + "nvidia-smi -q shows the BAR1 usage; " + LOGGING_HINT;
                case 1, 13 -> "the NVIDIA driver refused the pin: check that the memory belongs to this process's "
                        + "context; " + LOGGING_HINT;
                default -> LOGGING_HINT;
            };
        }
        if (call.startsWith("gdr_map")) {
            return switch (errno) {
                case 22 -> "gdrdrv refused the mapping (an address that is not GPU-page aligned, or a size past the "
                        + "pinned pages); " + LOGGING_HINT;
                case 11 -> "the buffer is mapped already, or gdrdrv could not create the mapping; " + LOGGING_HINT;
                case 12, 28 -> "out of BAR1 space or address space: unmap mappings no longer needed; " + LOGGING_HINT;
                default -> LOGGING_HINT;
            };
        }
        if (call.startsWith("gdr_driver_get_version")) {
            return "gdrdrv did not answer the version query: it may be older than 2.0; reload GDRCopy's gdrdrv";
        }
        if (call.startsWith("gdr_copy")) {
            return errno == 22 ? "the buffer is not mapped (it was unmapped or unpinned); " + LOGGING_HINT : LOGGING_HINT;
        }
        return LOGGING_HINT;
    }
}
