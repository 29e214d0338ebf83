package dev.gdasync.gdsync.nic;

/** Send work request flags, with the values of verbs' {@code ibv_send_flags}. */
public final class SendFlags {
    /** Wait for earlier RDMA READs and atomics of this queue pair to complete before executing. */
    public static final int FENCE = 1;
    /** Write a completion when the request completes (errors always write one). */
    public static final int SIGNALED = 1 << 1;
    /**
     * Copy the payload (at most 192 bytes) into the work request at post time, so the buffer is free at
     * once. Unlike verbs, the buffer must still name a live lkey of this NIC: Java reads it through its
     * registration, never through a raw address.
     */
    public static final int INLINE = 1 << 3;
    /** Every flag. */
    public static final int ALL = FENCE | SIGNALED | INLINE;

    private SendFlags() {
    }

    /**
     * @param flags flags
     * @return the flags' names joined by '|'
     */
    public static String describe(int flags) {
        StringBuilder b = new StringBuilder();
        if ((flags & FENCE) != 0) {
            b.append("FENCE|");
        }
        if ((flags & SIGNALED) != 0) {
            b.append("SIGNALED|");
        }
        if ((flags & INLINE) != 0) {
            b.append("INLINE|");
        }
        if ((flags & ~ALL) != 0) {
            b.append("0x").append(Integer.toHexString(flags & ~ALL)).append('|');
        }
        return b.isEmpty() ? "NONE" : b.substring(0, b.length() - 1);
    }
}
