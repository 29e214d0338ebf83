package dev.gdasync.apps.pingpong;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Locale;

/**
 * The payload of {@code --validate}: every message carries bytes derived from its iteration, its size
 * and its sender, so a message that is stale (an earlier iteration), cut short, sent by the wrong side
 * or corrupted fails the receiver's check with the iteration and the first wrong byte.
 *
 * <p>Byte {@code k} is byte {@code k % 8} (little-endian) of {@code mix(seed(iteration, size, sender), k / 8)},
 * where {@code mix} is SplitMix64's finalizer: every 8-byte word differs, and neighbouring iterations share
 * no words. The same definition is used by the MPJ reference ({@link MpjPingPong}) on byte arrays.
 */
public final class Pattern {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /**
     * Fault injection for the tests: with {@code -Dgdasync.pingpong.corruptAt=N}, rank 1 sends iteration N
     * with its first byte flipped, so rank 0's check must fail. Unset (-1) in every real run.
     */
    static final long CORRUPT_AT = Long.getLong("gdasync.pingpong.corruptAt", -1);

    private Pattern() {
    }

    /** Thrown when a received message does not carry the expected pattern. */
    public static final class MismatchException extends IllegalStateException {
        private static final long serialVersionUID = 1L;
        private final long iteration;
        private final long offset;

        MismatchException(String message, long iteration, long offset) {
            super(message);
            this.iteration = iteration;
            this.offset = offset;
        }

        /** @return the iteration whose message was wrong */
        public long iteration() {
            return iteration;
        }

        /** @return the first wrong byte's offset, or -1 when the length was wrong */
        public long offset() {
            return offset;
        }
    }

    static long seed(long iteration, int size, int sender) {
        return mix(iteration * 0x9E3779B97F4A7C15L ^ ((long) size << 20) ^ sender);
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** @return the expected byte at {@code offset} of a message */
    static byte expected(long seed, long offset) {
        return (byte) (mix(seed + (offset >>> 3)) >>> (8 * (offset & 7)));
    }

    /**
     * Writes the pattern of a message.
     *
     * @param buf       the message, exactly {@code size} bytes
     * @param iteration the iteration
     * @param sender    the sending rank
     */
    public static void fill(MemorySegment buf, long iteration, int sender) {
        int size = (int) buf.byteSize();
        long seed = seed(iteration, size, sender);
        long words = size >>> 3;
        for (long w = 0; w < words; w++) {
            buf.set(WORD, w << 3, mix(seed + w));
        }
        for (long k = words << 3; k < size; k++) {
            buf.set(ValueLayout.JAVA_BYTE, k, expected(seed, k));
        }
        if (iteration == CORRUPT_AT && sender == 1) {
            buf.set(ValueLayout.JAVA_BYTE, 0, (byte) ~buf.get(ValueLayout.JAVA_BYTE, 0));
        }
    }

    /**
     * Checks a received message.
     *
     * @param buf       the receive buffer, exactly {@code size} bytes
     * @param iteration the iteration it belongs to
     * @param sender    the rank that sent it
     * @param received  the byte count the receive reported, or -1 if unknown
     * @param where     what to name in the message (mode, rank)
     * @throws MismatchException naming the iteration and the first wrong byte
     */
    public static void check(MemorySegment buf, long iteration, int sender, long received, String where) {
        int size = (int) buf.byteSize();
        if (received >= 0 && received != size) {
            throw new MismatchException(String.format(Locale.ROOT, "%s: validation failed at iteration %d: received %d bytes, expected %d",
                    where, iteration, received, size), iteration, -1);
        }
        long seed = seed(iteration, size, sender);
        long words = size >>> 3;
        for (long w = 0; w < words; w++) {
            if (buf.get(WORD, w << 3) != mix(seed + w)) {
                for (long k = w << 3; ; k++) {
                    failIfDifferent(buf, seed, k, iteration, size, where);
                }
            }
        }
        for (long k = words << 3; k < size; k++) {
            failIfDifferent(buf, seed, k, iteration, size, where);
        }
    }

    private static void failIfDifferent(MemorySegment buf, long seed, long k, long iteration, int size, String where) {
        byte want = expected(seed, k);
        byte got = buf.get(ValueLayout.JAVA_BYTE, k);
        if (want != got) {
            throw new MismatchException(String.format(Locale.ROOT,
                    "%s: validation failed at iteration %d, byte %d of %d: expected 0x%02x, got 0x%02x",
                    where, iteration, k, size, want & 0xff, got & 0xff), iteration, k);
        }
    }
}
