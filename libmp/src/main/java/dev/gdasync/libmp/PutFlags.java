package dev.gdasync.libmp;

/** Flags of one-sided puts, with LibMP's values ({@code MP_PUT_INLINE}, {@code MP_PUT_NOWAIT}). */
public final class PutFlags {
    /** Copy the payload into the work request at post time (at most 192 bytes). */
    public static final int INLINE = 1;
    /**
     * Write no completion: the put cannot be waited on and releases itself once the NIC executed it
     * (LibMP leaked such requests; here they never do).
     */
    public static final int NOWAIT = 1 << 1;

    private PutFlags() {
    }

    static void check(int flags) {
        if ((flags & ~(INLINE | NOWAIT)) != 0) {
            throw new IllegalArgumentException("unknown put flags 0x" + Integer.toHexString(flags & ~(INLINE | NOWAIT))
                    + " (INLINE=1, NOWAIT=2)");
        }
    }
}
