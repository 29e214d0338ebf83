package dev.gdasync.libmp.mpj;

import mpjbuf.Buffer;
import mpjbuf.BufferException;
import mpjbuf.NIOBuffer;
import mpjbuf.Type;
import xdev.XDevException;

import java.lang.foreign.MemorySegment;

/**
 * A message of one of MPJ's primitive types ({@code MPI.BYTE} ... {@code MPI.DOUBLE}) taken from a program's array:
 * packed with MPJ's own buffer format ({@link Buffer}: a section header, then the elements), exactly as MPJ's
 * {@code Isend} packs it, so any MPJ receive unpacks it. The arguments are checked before anything changes.
 */
final class PrimitiveMessage {
    /** What a packed message is: its first section's type code and element count, and its length. */
    record Packed(int type, int elements, int length) {
    }

    /** MPJ's section header, before the elements. */
    private static final int SECTION_HEADER = 8;

    private final Object array;
    private final int offset;
    private final int count;
    private final Type type;
    private final int elementBytes;

    private PrimitiveMessage(Object array, int offset, int count, Type type, int elementBytes) {
        this.array = array;
        this.offset = offset;
        this.count = count;
        this.type = type;
        this.elementBytes = elementBytes;
    }

    /**
     * Checks a send's buffer arguments.
     *
     * @param call     the call, for messages
     * @param typeName the datatype's name ({@code MPI.INT}, ...)
     * @param array    the program's buffer
     * @return the message
     * @throws IllegalArgumentException if the buffer is null, not an array of the datatype's Java type, or the offset
     *                                  and count reach outside it
     */
    static PrimitiveMessage of(String call, String typeName, Object array, int offset, int count) {
        Type type;
        int bytes;
        String javaType;
        switch (typeName) {
            case "MPI.BYTE" -> { type = Type.BYTE; bytes = 1; javaType = "byte[]"; }
            case "MPI.CHAR" -> { type = Type.CHAR; bytes = 2; javaType = "char[]"; }
            case "MPI.SHORT" -> { type = Type.SHORT; bytes = 2; javaType = "short[]"; }
            case "MPI.BOOLEAN" -> { type = Type.BOOLEAN; bytes = 1; javaType = "boolean[]"; }
            case "MPI.INT" -> { type = Type.INT; bytes = 4; javaType = "int[]"; }
            case "MPI.LONG" -> { type = Type.LONG; bytes = 8; javaType = "long[]"; }
            case "MPI.FLOAT" -> { type = Type.FLOAT; bytes = 4; javaType = "float[]"; }
            case "MPI.DOUBLE" -> { type = Type.DOUBLE; bytes = 8; javaType = "double[]"; }
            default -> throw new IllegalArgumentException(call + ": datatype " + typeName + " is not a primitive type");
        }
        if (array == null) {
            throw new IllegalArgumentException(call + ": the buffer is null");
        }
        int length = switch (array) {
            case byte[] a when type == Type.BYTE -> a.length;
            case char[] a when type == Type.CHAR -> a.length;
            case short[] a when type == Type.SHORT -> a.length;
            case boolean[] a when type == Type.BOOLEAN -> a.length;
            case int[] a when type == Type.INT -> a.length;
            case long[] a when type == Type.LONG -> a.length;
            case float[] a when type == Type.FLOAT -> a.length;
            case double[] a when type == Type.DOUBLE -> a.length;
            default -> throw new IllegalArgumentException(call + ": " + typeName + " needs an array of type " + javaType + ", got "
                    + (array.getClass().isArray() ? array.getClass().getComponentType().getName() + "[]"
                    : "a " + array.getClass().getName()));
        };
        if (offset < 0 || count < 0 || (long) offset + count > length) {
            throw new IllegalArgumentException(call + ": offset " + offset + " and count " + count + " reach outside the "
                    + javaType + " buffer of " + length + " elements");
        }
        return new PrimitiveMessage(array, offset, count, type, bytes);
    }

    /** @return the bytes the packed message takes (MPJ's section header and the elements, rounded up to 8) */
    long packedBytes() {
        long n = SECTION_HEADER + (long) count * elementBytes;
        return (n + 7) & ~7L;
    }

    /**
     * Packs the message into memory, with MPJ's packing.
     *
     * @param into where (a send slot after the frame's header), at least {@link #packedBytes} long
     * @param call the call, for messages
     * @return what was packed
     * @throws XDevException if MPJ's buffer refuses it
     */
    Packed packInto(MemorySegment into, String call) {
        int capacity = (int) Math.min(into.byteSize(), Integer.MAX_VALUE);
        Buffer buf = new Buffer(new NIOBuffer(capacity, into.asSlice(0, capacity).asByteBuffer()), 0, capacity);
        try {
            buf.putSectionHeader(type);
            switch (array) {
                case byte[] a -> buf.write(a, offset, count);
                case char[] a -> buf.write(a, offset, count);
                case short[] a -> buf.write(a, offset, count);
                case boolean[] a -> buf.write(a, offset, count);
                case int[] a -> buf.write(a, offset, count);
                case long[] a -> buf.write(a, offset, count);
                case float[] a -> buf.write(a, offset, count);
                case double[] a -> buf.write(a, offset, count);
                default -> throw new IllegalStateException("not a primitive array: " + array.getClass());
            }
            buf.commit();
            return new Packed(buf.getSectionHeader().getCode(), buf.getSectionSize(), buf.getSize());
        } catch (BufferException e) {
            throw new XDevException(call + ": MPJ's buffer refused the message: " + e);
        }
    }
}
