package dev.gdasync.gdsync.memop;

/**
 * The conditions a WAIT memop can block on, with LibGDSync's meaning (x is the word, v the operand).
 *
 * <p>The numeric codes equal LibGDSync's {@code gds_wait_cond_flag_t} and the order of CUDA's
 * {@code CU_STREAM_WAIT_VALUE_*} conditions, so translations stay table lookups.
 */
public enum WaitCondition {
    /** {@code (signed)(x - v) >= 0}: x has reached v, correct across wrap-around of the counter. */
    GEQ(0),
    /** {@code x == v}. */
    EQ(1),
    /** {@code (x & v) != 0}: some bit of v is set in x. */
    AND(2),
    /** {@code ~(x | v) != 0}: some bit is clear in both x and v. */
    NOR(3);

    private final int code;

    WaitCondition(int code) {
        this.code = code;
    }

    /** @return the LibGDSync code of this condition */
    public int code() {
        return code;
    }

    /**
     * Finds a condition by code.
     *
     * @param code a code from {@link #code()}
     * @return the condition
     * @throws IllegalArgumentException if no condition has that code
     */
    public static WaitCondition ofCode(int code) {
        for (WaitCondition c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown wait condition code " + code + " (GEQ=0, EQ=1, AND=2, NOR=3)");
    }

    /**
     * Evaluates the condition on 32-bit values.
     *
     * @param x the word's value
     * @param v the operand
     * @return whether the wait is satisfied
     */
    public boolean test(int x, int v) {
        return switch (this) {
            case GEQ -> x - v >= 0;
            case EQ -> x == v;
            case AND -> (x & v) != 0;
            case NOR -> ~(x | v) != 0;
        };
    }

    /**
     * Evaluates the condition on 64-bit values.
     *
     * @param x the word's value
     * @param v the operand
     * @return whether the wait is satisfied
     */
    public boolean test(long x, long v) {
        return switch (this) {
            case GEQ -> x - v >= 0;
            case EQ -> x == v;
            case AND -> (x & v) != 0;
            case NOR -> ~(x | v) != 0;
        };
    }
}
