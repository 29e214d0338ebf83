package dev.gdasync.libmp.coll.reduce;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * How two elements combine. Integer SUM and PROD wrap around (two's complement, as MPI and NCCL do); float MAX and
 * MIN follow {@link Math#max(float, float)} (a NaN wins). Every operator is commutative bit for bit, so the
 * collectives' fixed order gives every rank the same bits.
 */
public enum ReduceOp {
    /** a + b. */
    SUM,
    /** a · b. */
    PROD,
    /** the larger. */
    MAX,
    /** the smaller. */
    MIN;

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    /**
     * {@code acc[i] = acc[i] ∘ in[i]} for {@code count} elements.
     *
     * @param type  the element type
     * @param acc   the accumulator (read and written), at least {@code count} elements
     * @param in    the other operand, at least {@code count} elements
     * @param count the number of elements
     */
    public void apply(DataType type, MemorySegment acc, MemorySegment in, long count) {
        long n = count * type.bytes();
        if (acc.byteSize() < n || in.byteSize() < n) {
            throw new IllegalArgumentException(this + " of " + count + " " + type + " needs " + n + " bytes; acc has "
                    + acc.byteSize() + ", in has " + in.byteSize());
        }
        switch (type) {
            case INT32 -> {
                for (long o = 0; o < n; o += 4) {
                    acc.set(I32, o, ints(acc.get(I32, o), in.get(I32, o)));
                }
            }
            case INT64 -> {
                for (long o = 0; o < n; o += 8) {
                    acc.set(I64, o, longs(acc.get(I64, o), in.get(I64, o)));
                }
            }
            case FLOAT32 -> {
                for (long o = 0; o < n; o += 4) {
                    acc.set(F32, o, floats(acc.get(F32, o), in.get(F32, o)));
                }
            }
            case FLOAT64 -> {
                for (long o = 0; o < n; o += 8) {
                    acc.set(F64, o, doubles(acc.get(F64, o), in.get(F64, o)));
                }
            }
        }
    }

    private int ints(int a, int b) {
        return switch (this) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }

    private long longs(long a, long b) {
        return switch (this) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }

    private float floats(float a, float b) {
        return switch (this) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }

    private double doubles(double a, double b) {
        return switch (this) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }
}
