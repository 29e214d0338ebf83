package dev.gdasync.gdsync.nic;

import java.util.StringJoiner;

/**
 * Access flags of a memory region, with the bit values of verbs' {@code ibv_access_flags}.
 *
 * <p>Local reads are always allowed. A region that a peer writes into must carry
 * {@link #REMOTE_WRITE}; verbs also demands {@link #LOCAL_WRITE} with any remote write or atomic flag,
 * and so does every provider here.
 */
public final class Access {
    /** The local NIC may write the region (receive buffers, RDMA READ and atomic results). */
    public static final int LOCAL_WRITE = 1;
    /** Peers may RDMA WRITE into the region. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** Peers may RDMA READ from the region. */
    public static final int REMOTE_READ = 1 << 2;
    /** Peers may run atomics on the region's 64-bit words. */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** Every flag. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private Access() {
    }

    /**
     * Checks a flag set.
     *
     * @param access the flags
     * @return the flags
     * @throws IllegalArgumentException if unknown bits are set, or a remote write or atomic flag comes
     *                                  without {@link #LOCAL_WRITE}
     */
    public static int validate(int access) {
        if ((access & ~ALL) != 0) {
            throw new IllegalArgumentException("unknown access bits 0x" + Integer.toHexString(access & ~ALL)
                    + " (known: LOCAL_WRITE=1, REMOTE_WRITE=2, REMOTE_READ=4, REMOTE_ATOMIC=8)");
        }
        if ((access & (REMOTE_WRITE | REMOTE_ATOMIC)) != 0 && (access & LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException("REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE, got " + describe(access));
        }
        return access;
    }

    /**
     * @param access flags
     * @return the flags' names joined by '|', or NONE
     */
    public static String describe(int access) {
        if (access == 0) {
            return "NONE";
        }
        StringJoiner j = new StringJoiner("|");
        if ((access & LOCAL_WRITE) != 0) {
            j.add("LOCAL_WRITE");
        }
        if ((access & REMOTE_WRITE) != 0) {
            j.add("REMOTE_WRITE");
        }
        if ((access & REMOTE_READ) != 0) {
            j.add("REMOTE_READ");
        }
        if ((access & REMOTE_ATOMIC) != 0) {
            j.add("REMOTE_ATOMIC");
        }
        if ((access & ~ALL) != 0) {
            j.add("0x" + Integer.toHexString(access & ~ALL));
        }
        return j.toString();
    }
}
