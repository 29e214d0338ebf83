package dev.gdasync.libmp.coll.reduce;

import dev.gdasync.gdsync.ki.Reduction;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * How two elements combine, as gdsync's {@link Reduction} defines it for every form (host, kernel table, CUDA kernel).
 * Integer SUM and PROD wrap around (two's complement, as MPI and NCCL do); float MAX and MIN follow
 * {@link Math#max(float, float)} (a NaN wins). Every operator is commutative bit for bit, so the collectives' fixed
 * order gives every rank the same bits.
 */
public enum ReduceOp {
    /** a + b. */
    SUM(Reduction.SUM),
    /** a · b. */
    PROD(Reduction.PROD),
    /** the larger. */
    MAX(Reduction.MAX),
    /** the smaller. */
    MIN(Reduction.MIN);

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    private final int code;

    ReduceOp(int code) {
        this.code = code;
    }

    /** @return the operator's code in kernel tables ({@link Reduction}) */
    public int code() {
        return code;
    }

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
                    acc.set(I32, o, Reduction.combine(code, acc.get(I32, o), in.get(I32, o)));
                }
            }
            case INT64 -> {
                for (long o = 0; o < n; o += 8) {
                    acc.set(I64, o, Reduction.combine(code, acc.get(I64, o), in.get(I64, o)));
                }
            }
            case FLOAT32 -> {
                for (long o = 0; o < n; o += 4) {
                    acc.set(F32, o, Reduction.combine(code, acc.get(F32, o), in.get(F32, o)));
                }
            }
            case FLOAT64 -> {
                for (long o = 0; o < n; o += 8) {
                    acc.set(F64, o, Reduction.combine(code, acc.get(F64, o), in.get(F64, o)));
                }
            }
        }
    }
}
