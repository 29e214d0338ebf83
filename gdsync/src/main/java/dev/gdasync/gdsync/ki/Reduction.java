package dev.gdasync.gdsync.ki;

/**
 * The reduction operators, one definition for every form that combines elements: their codes (the {@code op} of
 * an MSCCL kernel table, {@link MscclTableLayout}; libmp's {@code ReduceOp} carries them) and how each combines two
 * elements, as {@code gds_msccl_combine} in {@code msccl_interpreter.cuh} does. libmp's host reductions, the kernel's
 * host mirrors and the CUDA kernel give the same bits:
 * integers wrap (two's complement, as MPI and NCCL do); floating max and min follow {@link Math#max(double, double)}
 * and {@link Math#min(double, double)} (a NaN wins, +0 is above -0), so every operator is commutative bit for bit and
 * the result does not depend on the order of the operands.
 */
public final class Reduction {
    /** Operator code: a + b. */
    public static final int SUM = 0;
    /** Operator code: a · b. */
    public static final int PROD = 1;
    /** Operator code: the larger. */
    public static final int MAX = 2;
    /** Operator code: the smaller. */
    public static final int MIN = 3;
    /** How many operators there are (codes {@code 0..OPERATORS - 1}). */
    public static final int OPERATORS = 4;

    private Reduction() {
    }

    /**
     * @param op an operator code; any other value combines as {@link #MIN}, as the kernel's switch does
     * @param a  one operand
     * @param b  the other
     * @return {@code a op b}
     */
    public static int combine(int op, int a, int b) {
        return switch (op) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            default -> Math.min(a, b);
        };
    }

    /**
     * @param op an operator code; any other value combines as {@link #MIN}
     * @param a  one operand
     * @param b  the other
     * @return {@code a op b}
     */
    public static long combine(int op, long a, long b) {
        return switch (op) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            default -> Math.min(a, b);
        };
    }

    /**
     * @param op an operator code; any other value combines as {@link #MIN}
     * @param a  one operand
     * @param b  the other
     * @return {@code a op b}
     */
    public static float combine(int op, float a, float b) {
        return switch (op) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            default -> Math.min(a, b);
        };
    }

    /**
     * @param op an operator code; any other value combines as {@link #MIN}
     * @param a  one operand
     * @param b  the other
     * @return {@code a op b}
     */
    public static double combine(int op, double a, double b) {
        return switch (op) {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            default -> Math.min(a, b);
        };
    }
}
