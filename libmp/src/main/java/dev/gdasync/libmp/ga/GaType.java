package dev.gdasync.libmp.ga;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/** The element types of a global array; elements are stored in the platform's byte order. */
public enum GaType {
    /** 32-bit two's complement integers. */
    INT(JAVA_INT_UNALIGNED),
    /** 64-bit two's complement integers. */
    LONG(JAVA_LONG_UNALIGNED),
    /** 32-bit IEEE 754 floats. */
    FLOAT(JAVA_FLOAT_UNALIGNED),
    /** 64-bit IEEE 754 doubles. */
    DOUBLE(JAVA_DOUBLE_UNALIGNED);

    /** The largest magnitude an integer scale factor may have: every integer up to it is exact as a double. */
    private static final double EXACT_INTEGER_LIMIT = 0x1p53;

    private final ValueLayout layout;

    GaType(ValueLayout layout) {
        this.layout = layout;
    }

    /** @return the bytes of one element */
    public int bytes() {
        return (int) layout.byteSize();
    }

    /** @return whether the type holds integers ({@link #INT}, {@link #LONG}) */
    public boolean isInteger() {
        return this == INT || this == LONG;
    }

    /** @return the layout of one element (unaligned: callers' buffers need not be aligned) */
    ValueLayout layout() {
        return layout;
    }

    /**
     * Checks a scale factor for this type: integer types take integer factors only, exactly representable.
     *
     * @throws IllegalArgumentException if it does not fit
     */
    void checkScale(double alpha, String what) {
        if (Double.isNaN(alpha) || Double.isInfinite(alpha)) {
            throw new IllegalArgumentException(what + " " + alpha + " is not a finite number");
        }
        if (isInteger() && (alpha != Math.rint(alpha) || Math.abs(alpha) > EXACT_INTEGER_LIMIT)) {
            throw new IllegalArgumentException(what + " " + alpha + " is not an integer of magnitude at most 2^53: "
                    + this + " arrays take integer factors");
        }
    }

    /** dst[i] += alpha * src[i] for {@code count} elements; integer types wrap as Java arithmetic does. */
    void accumulate(MemorySegment dst, long dstOffset, MemorySegment src, long srcOffset, long count, double alpha) {
        switch (this) {
            case INT -> {
                long a = (long) alpha;
                for (long i = 0; i < count; i++) {
                    long d = dstOffset + 4 * i;
                    dst.set(JAVA_INT_UNALIGNED, d, (int) (dst.get(JAVA_INT_UNALIGNED, d) + a * src.get(JAVA_INT_UNALIGNED, srcOffset + 4 * i)));
                }
            }
            case LONG -> {
                long a = (long) alpha;
                for (long i = 0; i < count; i++) {
                    long d = dstOffset + 8 * i;
                    dst.set(JAVA_LONG_UNALIGNED, d, dst.get(JAVA_LONG_UNALIGNED, d) + a * src.get(JAVA_LONG_UNALIGNED, srcOffset + 8 * i));
                }
            }
            case FLOAT -> {
                float a = (float) alpha;
                for (long i = 0; i < count; i++) {
                    long d = dstOffset + 4 * i;
                    dst.set(JAVA_FLOAT_UNALIGNED, d, dst.get(JAVA_FLOAT_UNALIGNED, d) + a * src.get(JAVA_FLOAT_UNALIGNED, srcOffset + 4 * i));
                }
            }
            case DOUBLE -> {
                for (long i = 0; i < count; i++) {
                    long d = dstOffset + 8 * i;
                    dst.set(JAVA_DOUBLE_UNALIGNED, d, dst.get(JAVA_DOUBLE_UNALIGNED, d) + alpha * src.get(JAVA_DOUBLE_UNALIGNED, srcOffset + 8 * i));
                }
            }
        }
    }

    /** Writes {@code count} copies of a value, given as its double, or as its long for the integer types. */
    void fill(MemorySegment dst, long count, long asLong, double asDouble) {
        for (long i = 0, b = bytes(); i < count; i++) {
            switch (this) {
                case INT -> dst.set(JAVA_INT_UNALIGNED, i * b, (int) asLong);
                case LONG -> dst.set(JAVA_LONG_UNALIGNED, i * b, asLong);
                case FLOAT -> dst.set(JAVA_FLOAT_UNALIGNED, i * b, (float) asDouble);
                case DOUBLE -> dst.set(JAVA_DOUBLE_UNALIGNED, i * b, asDouble);
            }
        }
    }
}
