package dev.gdasync.gdsync.descriptor;

/** Flags of descriptors, with LibGDSync's values. */
public final class DescriptorFlags {
    /** WAIT_VALUE32: flush remote (GPUDirect RDMA) writes after the wait ({@code GDS_WAIT_POST_FLUSH_REMOTE}). */
    public static final int WAIT_POST_FLUSH = 1 << 3;
    /** WRITE_VALUE32: earlier writes are visible first ({@code GDS_WRITE_PRE_BARRIER_SYS}). */
    public static final int WRITE_PRE_BARRIER = 1 << 4;
    /** WRITE_MEMORY: a system barrier after the copy ({@code GDS_WRITE_MEMORY_POST_BARRIER_SYS}). */
    public static final int WRITE_MEMORY_POST_BARRIER = 1 << 4;
    /** WRITE_MEMORY: earlier writes are visible before the copy ({@code GDS_WRITE_MEMORY_PRE_BARRIER_SYS}). */
    public static final int WRITE_MEMORY_PRE_BARRIER = 1 << 5;

    private DescriptorFlags() {
    }

    static void check(int flags, int allowed, String what) {
        if ((flags & ~allowed) != 0) {
            throw new IllegalArgumentException(what + " does not take flags 0x" + Integer.toHexString(flags & ~allowed)
                    + " (allowed: 0x" + Integer.toHexString(allowed) + ")");
        }
    }
}
