package dev.gdasync.gdsync.nic;

/**
 * Sizes of a queue pair and its two dedicated completion queues.
 *
 * @param sendDepth   send queue entries, a power of two in [2, 65536]
 * @param recvDepth   receive queue entries (and receive completion queue entries), a power of two in [2, 65536]
 * @param sendCqDepth send completion queue entries, a power of two in [2, 65536]: the most signaled
 *                    sends whose completions may be outstanding at once
 */
public record QueuePairConfig(int sendDepth, int recvDepth, int sendCqDepth) {

    /** LibMP's depths: 512 sends, 512 receives, 1024 send completions. */
    public static final QueuePairConfig DEFAULT = new QueuePairConfig(512, 512, 1024);

    /**
     * @throws IllegalArgumentException if a depth is not a power of two in [2, 65536]
     */
    public QueuePairConfig {
        check("sendDepth", sendDepth);
        check("recvDepth", recvDepth);
        check("sendCqDepth", sendCqDepth);
    }

    private static void check(String name, int v) {
        if (v < 2 || v > 65536 || Integer.bitCount(v) != 1) {
            throw new IllegalArgumentException(name + " must be a power of two in [2, 65536], got " + v);
        }
    }
}
