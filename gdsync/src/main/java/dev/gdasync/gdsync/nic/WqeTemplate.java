package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memop.MemoryWord;

import java.util.Objects;

/**
 * Where a prepared send's work request lies in its send queue, and the byte offsets of the fields a
 * kernel thread may patch before ringing it (a templated send, after GPU-initiated OpenSHMEM): the local
 * buffer's address, lkey and length, the message length, and the remote address and key. How the fields are
 * written is the {@link Encoding}; a field the work request does not have (the remote target of a SEND on mlx5) is
 * {@link #ABSENT}, and is not written.
 *
 * @param entry            the first word of the work request
 * @param offSgeAddress    offset of the local buffer address
 * @param offSgeLkey       offset of the local buffer lkey
 * @param offSgeLength     offset of the local buffer length
 * @param offTotalLength   offset of the message length (the buffer length's own offset where there is no separate one)
 * @param offRemoteAddress offset of the remote address, or {@link #ABSENT}
 * @param offRkey          offset of the rkey, or {@link #ABSENT}
 * @param encoding         how the fields are written
 */
public record WqeTemplate(MemoryWord entry, int offSgeAddress, int offSgeLkey, int offSgeLength, int offTotalLength,
                          int offRemoteAddress, int offRkey, Encoding encoding) {
    /** The offset of a field the work request does not have. */
    public static final int ABSENT = 0xffff;

    /** How a template's fields are written. */
    public enum Encoding {
        /** The software NIC's work requests: little-endian, 64-bit addresses and keys, 32-bit lengths. */
        SOFTWARE,
        /** mlx5 WQE segments: big-endian, 64-bit addresses, 32-bit keys and lengths. */
        MLX5
    }

    /** @throws IllegalArgumentException if an offset is negative or past {@link #ABSENT} */
    public WqeTemplate {
        Objects.requireNonNull(entry, "entry");
        Objects.requireNonNull(encoding, "encoding");
        for (int off : new int[] {offSgeAddress, offSgeLkey, offSgeLength, offTotalLength, offRemoteAddress, offRkey}) {
            if (off < 0 || off > ABSENT) {
                throw new IllegalArgumentException("a template field offset must be in [0, 0xffff], got " + off);
            }
        }
    }

    /**
     * A template in the software NIC's encoding.
     *
     * @param entry            the first word of the work request
     * @param offSgeAddress    offset of the local buffer address
     * @param offSgeLkey       offset of the local buffer lkey
     * @param offSgeLength     offset of the local buffer length
     * @param offTotalLength   offset of the message length
     * @param offRemoteAddress offset of the remote address
     * @param offRkey          offset of the rkey
     */
    public WqeTemplate(MemoryWord entry, int offSgeAddress, int offSgeLkey, int offSgeLength, int offTotalLength,
                       int offRemoteAddress, int offRkey) {
        this(entry, offSgeAddress, offSgeLkey, offSgeLength, offTotalLength, offRemoteAddress, offRkey, Encoding.SOFTWARE);
    }
}
