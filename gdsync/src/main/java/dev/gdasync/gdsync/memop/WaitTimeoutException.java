package dev.gdasync.gdsync.memop;

/**
 * A wait on a word did not complete in time. The message names the word, the condition, the awaited
 * value and the last value seen.
 */
public final class WaitTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient MemoryWord word;
    private final long awaited;
    private final long seen;
    private final WaitCondition condition;

    /**
     * @param word      the word waited on
     * @param condition the condition
     * @param awaited   the operand
     * @param seen      the last value read
     * @param waitedNanos how long the wait lasted
     */
    public WaitTimeoutException(MemoryWord word, WaitCondition condition, long awaited, long seen, long waitedNanos) {
        super(String.format("timed out after %d ms waiting on %s: wanted %s %s, last value seen %s",
                waitedNanos / 1_000_000, word, condition, format(awaited, word.width()), format(seen, word.width())));
        this.word = word;
        this.condition = condition;
        this.awaited = awaited;
        this.seen = seen;
    }

    private static String format(long v, int width) {
        return width == 4
                ? Integer.toUnsignedString((int) v) + " (0x" + Integer.toHexString((int) v) + ")"
                : Long.toUnsignedString(v) + " (0x" + Long.toHexString(v) + ")";
    }

    /** @return the word waited on */
    public MemoryWord word() {
        return word;
    }

    /** @return the condition */
    public WaitCondition condition() {
        return condition;
    }

    /** @return the awaited operand */
    public long awaited() {
        return awaited;
    }

    /** @return the last value seen */
    public long seen() {
        return seen;
    }
}
