package dev.gdasync.test.harness;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;

/**
 * Deterministic byte patterns and checksums that both processes compute the same way, so a payload is
 * checked byte for byte (or by CRC-32C) without shipping it back.
 */
public final class Payloads {
    private static final long MESSAGE_SALT = 0x6D657373616765L;
    private static final int CHUNK = 1 << 16;

    private Payloads() {
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * The bytes [from, from + length) of the pattern of a seed.
     *
     * @param seed   the seed
     * @param from   index of the first byte in the pattern
     * @param length how many bytes
     * @return the bytes
     */
    public static byte[] pattern(long seed, long from, int length) {
        byte[] b = new byte[length];
        long word = Long.MIN_VALUE;
        long bits = 0;
        for (int i = 0; i < length; i++) {
            long idx = from + i;
            long w = idx >>> 3;
            if (w != word) {
                word = w;
                bits = mix(seed * 0x9E3779B97F4A7C15L + w);
            }
            b[i] = (byte) (bits >>> ((idx & 7) * 8));
        }
        return b;
    }

    /** @return the first {@code length} bytes of a seed's pattern */
    public static byte[] pattern(long seed, int length) {
        return pattern(seed, 0, length);
    }

    /**
     * Fills a range of a segment with a seed's pattern (pattern index 0 at {@code offset}).
     *
     * @param seg    the segment
     * @param offset where to start
     * @param length how many bytes
     * @param seed   the seed
     */
    public static void fill(MemorySegment seg, long offset, long length, long seed) {
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(CHUNK, length - done);
            MemorySegment.copy(pattern(seed, done, n), 0, seg, ValueLayout.JAVA_BYTE, offset + done, n);
            done += n;
        }
    }

    /** @return the CRC-32C of a segment range */
    public static int crc(MemorySegment seg, long offset, long length) {
        CRC32C c = new CRC32C();
        c.update(seg.asSlice(offset, length).asByteBuffer());
        return (int) c.getValue();
    }

    /** @return the CRC-32C of bytes */
    public static int crc(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return (int) c.getValue();
    }

    /** @return the CRC-32C of the first {@code length} bytes of a seed's pattern */
    public static int patternCrc(long seed, long length) {
        CRC32C c = new CRC32C();
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(CHUNK, length - done);
            c.update(pattern(seed, done, n));
            done += n;
        }
        return (int) c.getValue();
    }

    /**
     * The size of message {@code seq} of a stream whose sizes vary in [min, max].
     *
     * @param seq the sequence number
     * @param min the smallest size, at least 8
     * @param max the largest size
     * @return the size
     */
    public static int messageSize(long seq, int min, int max) {
        if (min < 8 || max < min) {
            throw new IllegalArgumentException("message sizes need 8 <= min <= max, got " + min + ", " + max);
        }
        return min + (int) Math.floorMod(seq * 7919, (long) (max - min + 1));
    }

    /**
     * Message {@code seq}: its sequence number (8 bytes, little-endian), then the pattern of the sequence
     * number.
     *
     * @param seq  the sequence number
     * @param size the total size, at least 8
     * @return the bytes
     */
    public static byte[] message(long seq, int size) {
        byte[] b = pattern(seq ^ MESSAGE_SALT, size);
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (seq >>> (8 * i));
        }
        return b;
    }

    /**
     * Compares a segment range with expected bytes.
     *
     * @return the index of the first differing byte, or -1 if equal
     */
    public static long mismatch(MemorySegment seg, long offset, byte[] expected) {
        return MemorySegment.mismatch(seg, offset, offset + expected.length,
                MemorySegment.ofArray(expected), 0, expected.length);
    }
}
