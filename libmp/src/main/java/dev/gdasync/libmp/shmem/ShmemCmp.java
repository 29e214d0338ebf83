package dev.gdasync.libmp.shmem;

/** The comparisons of {@link Shmem#waitUntil} and {@link Shmem#test} (OpenSHMEM's {@code SHMEM_CMP_*}); signed. */
public enum ShmemCmp {
    /** Equal. */
    EQ,
    /** Not equal. */
    NE,
    /** Greater than. */
    GT,
    /** Greater than or equal. */
    GE,
    /** Less than. */
    LT,
    /** Less than or equal. */
    LE;

    /**
     * @param seen  the word's value
     * @param value the operand
     * @return whether {@code seen <op> value} holds (signed 64-bit comparison)
     */
    public boolean holds(long seen, long value) {
        return switch (this) {
            case EQ -> seen == value;
            case NE -> seen != value;
            case GT -> seen > value;
            case GE -> seen >= value;
            case LT -> seen < value;
            case LE -> seen <= value;
        };
    }
}
