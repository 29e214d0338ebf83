package dev.gdasync.ki.msccl;

/**
 * The reduction operators of the MSCCL-IR kernel table ({@code op}: 0 sum, 1 product, 2 max, 3 min), element by
 * element, as {@code gds_msccl_combine} in {@code msccl_interpreter.cuh} and libmp's {@code ReduceOp} compute them:
 * integers wrap (a 32-bit result is the low half of the 64-bit one), floating max and min follow
 * {@link Math#max(double, double)} and {@link Math#min(double, double)} (a NaN wins, +0 above -0), so the result
 * does not depend on the order of the operands.
 */
public final class MscclOperators {
    private MscclOperators() {
    }

    /**
     * Combines two integers.
     *
     * @param op the table's operator, 0..3
     * @param a  one operand
     * @param b  the other
     * @return {@code a op b}
     */
    public static long integers(int op, long a, long b) {
        return switch (op) {
            case 0 -> a + b;
            case 1 -> a * b;
            case 2 -> Math.max(a, b);
            default -> Math.min(a, b);
        };
    }

    /**
     * Combines two floating values. A float32 sum or product computed in double and rounded to float is the correctly
     * rounded float32 result (53 bits are more than 2 · 24 + 2, so the second rounding cannot change it).
     *
     * @param op the table's operator, 0..3
     * @param a  one operand
     * @param b  the other
     * @return {@code a op b}
     */
    public static double floats(int op, double a, double b) {
        return switch (op) {
            case 0 -> a + b;
            case 1 -> a * b;
            case 2 -> Math.max(a, b);
            default -> Math.min(a, b);
        };
    }
}
