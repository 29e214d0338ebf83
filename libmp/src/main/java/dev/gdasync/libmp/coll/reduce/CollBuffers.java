package dev.gdasync.libmp.coll.reduce;

import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.RegisteredBuffers;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/** The buffer rules every collective of this package and of the MSCCL runtime checks before it writes anything. */
public final class CollBuffers {
    private CollBuffers() {
    }

    /**
     * Everything a collective call needs of its arguments: none null, a count &gt;= 0, both buffers large enough and
     * inside their registrations.
     *
     * @param what      the call, for the messages
     * @param send      the send buffer
     * @param sendReg   its registration
     * @param recv      the receive buffer
     * @param recvReg   its registration
     * @param count     the call's count
     * @param type      the element type
     * @param op        the operator
     * @param sendElems the elements {@code send} must hold
     * @param recvElems the elements {@code recv} must hold
     * @return the bytes of {@code count} elements
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if a rule is broken
     */
    public static long requireCall(String what, MemorySegment send, MpRegistration sendReg, MemorySegment recv,
                                   MpRegistration recvReg, long count, DataType type, ReduceOp op, long sendElems,
                                   long recvElems) {
        Objects.requireNonNull(send, "send must not be null");
        Objects.requireNonNull(sendReg, "sendReg must not be null");
        Objects.requireNonNull(recv, "recv must not be null");
        Objects.requireNonNull(recvReg, "recvReg must not be null");
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(op, "op must not be null");
        if (count < 0) {
            throw new IllegalArgumentException(what + ": count must be >= 0, got " + count);
        }
        CollBuffers.requireElems(what, "send", send, sendElems, type);
        CollBuffers.requireElems(what, "recv", recv, recvElems, type);
        RegisteredBuffers.requireInside("send", send, "sendReg", sendReg);
        RegisteredBuffers.requireInside("recv", recv, "recvReg", recvReg);
        return product(what, "count", count, type.bytes(), type + " bytes each");
    }

    /**
     * A count times a factor (ranks, element bytes), refused with the call's own message when it passes a long: a
     * count near the overflow edge is bad input, not an {@link ArithmeticException} from inside the library.
     *
     * @param what       the call, for the message
     * @param countName  the count's parameter name
     * @param count      the count
     * @param factor     what it is multiplied by
     * @param factorName what the factor is, for the message
     * @return the product
     * @throws IllegalArgumentException if it does not fit in a long
     */
    public static long product(String what, String countName, long count, long factor, String factorName) {
        try {
            return Math.multiplyExact(count, factor);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + ": " + countName + " " + count + " × " + factor + " (" + factorName
                    + ") is past the largest long: no buffer holds that much");
        }
    }

    /**
     * @param what  the call, for the message
     * @param name  the buffer's parameter name
     * @param buf   the buffer
     * @param elems the elements it must hold
     * @param type  their type
     * @throws IllegalArgumentException if it is smaller
     */
    public static void requireElems(String what, String name, MemorySegment buf, long elems, DataType type) {
        long need = product(what, name + "'s elements", elems, type.bytes(), type + " bytes each");
        if (buf.byteSize() < need) {
            throw new IllegalArgumentException(what + ": " + name + " holds " + buf.byteSize() + " bytes but needs "
                    + elems + " " + type + " = " + need + " bytes");
        }
    }

    /**
     * In place means the very same start; any other overlap of the first {@code bytes} is refused.
     *
     * @param send  the send buffer
     * @param recv  the receive buffer
     * @param bytes the bytes each is used for
     * @throws IllegalArgumentException if they overlap at different starts
     */
    public static void requireSameOrDisjoint(MemorySegment send, MemorySegment recv, long bytes) {
        long s = send.address();
        long r = recv.address();
        if (s != r && s < r + bytes && r < s + bytes && bytes > 0) {
            throw new IllegalArgumentException("send and recv overlap without being the same buffer (in place needs "
                    + "recv == send)");
        }
    }

    /**
     * {@code part} must either lie outside {@code whole} or start exactly at {@code whole + at}.
     *
     * @param whole     the larger buffer
     * @param part      the per-rank buffer
     * @param partBytes the bytes of the part that are used
     * @param at        where the part must start for in place
     * @param rule      the rule, for the message
     * @throws IllegalArgumentException if they overlap elsewhere
     */
    public static void requireInPlaceAt(MemorySegment whole, MemorySegment part, long partBytes, long at,
                                         String rule) {
        long w = whole.address();
        long p = part.address();
        long wholeBytes = whole.byteSize();
        boolean overlap = p < w + wholeBytes && w < p + partBytes && partBytes > 0;
        if (overlap && p != w + at) {
            throw new IllegalArgumentException("send and recv overlap but not in place: in place needs " + rule
                    + " (offset " + at + " bytes), got offset " + (p - w));
        }
    }
}
