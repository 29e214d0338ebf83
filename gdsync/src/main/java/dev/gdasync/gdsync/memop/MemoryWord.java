package dev.gdasync.gdsync.memop;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A naturally aligned 32- or 64-bit word in native memory: the target of a memop.
 *
 * <p>The word is named so that a failed wait can say which word it waited on. Host executors access
 * it through the segment; a GPU executor translates {@link #address()} to a device pointer.
 */
public final class MemoryWord {
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment segment;
    private final long offset;
    private final int width;
    private final String name;

    private MemoryWord(MemorySegment segment, long offset, int width, String name) {
        Objects.requireNonNull(segment, "segment must not be null");
        Objects.requireNonNull(name, "name must not be null");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("memop words must be in native memory, got a heap segment for " + name);
        }
        if (offset < 0 || offset > segment.byteSize() - width) {
            throw new IndexOutOfBoundsException("word '" + name + "' at offset " + offset + " (" + width
                    + " bytes) is outside its segment of " + segment.byteSize() + " bytes");
        }
        if (((segment.address() + offset) & (width - 1)) != 0) {
            throw new IllegalArgumentException("word '" + name + "' at 0x" + Long.toHexString(segment.address() + offset)
                    + " is not aligned to " + width + " bytes");
        }
        this.segment = segment;
        this.offset = offset;
        this.width = width;
        this.name = name;
    }

    /**
     * A 32-bit word.
     *
     * @param segment the native segment holding it
     * @param offset  byte offset in the segment, a multiple of 4 from an aligned base
     * @param name    what the word is, for error messages
     * @return the word
     * @throws NullPointerException     if the segment or the name is null
     * @throws IllegalArgumentException if the segment is not native or the word is misaligned
     * @throws IndexOutOfBoundsException if the word does not lie inside the segment
     */
    public static MemoryWord word32(MemorySegment segment, long offset, String name) {
        return new MemoryWord(segment, offset, 4, name);
    }

    /**
     * A 64-bit word.
     *
     * @param segment the native segment holding it
     * @param offset  byte offset in the segment, a multiple of 8 from an aligned base
     * @param name    what the word is, for error messages
     * @return the word
     * @throws NullPointerException     if the segment or the name is null
     * @throws IllegalArgumentException if the segment is not native or the word is misaligned
     * @throws IndexOutOfBoundsException if the word does not lie inside the segment
     */
    public static MemoryWord word64(MemorySegment segment, long offset, String name) {
        return new MemoryWord(segment, offset, 8, name);
    }

    /** @return the segment holding the word */
    public MemorySegment segment() {
        return segment;
    }

    /** @return the word's byte offset in {@link #segment()} */
    public long offset() {
        return offset;
    }

    /** @return 4 or 8 */
    public int width() {
        return width;
    }

    /** @return what the word is */
    public String name() {
        return name;
    }

    /** @return the word's address in this process */
    public long address() {
        return segment.address() + offset;
    }

    /** @return the 32-bit value with acquire semantics */
    public int getAcquire32() {
        return (int) INT.getAcquire(segment, offset);
    }

    /** @return the 64-bit value with acquire semantics */
    public long getAcquire64() {
        return (long) LONG.getAcquire(segment, offset);
    }

    /**
     * Stores a 32-bit value.
     *
     * @param value   the value
     * @param barrier whether every earlier write of this thread must be visible before this one
     */
    public void set32(int value, boolean barrier) {
        if (barrier) {
            INT.setRelease(segment, offset, value);
        } else {
            INT.setOpaque(segment, offset, value);
        }
    }

    /**
     * Stores a 64-bit value.
     *
     * @param value   the value
     * @param barrier whether every earlier write of this thread must be visible before this one
     */
    public void set64(long value, boolean barrier) {
        if (barrier) {
            LONG.setRelease(segment, offset, value);
        } else {
            LONG.setOpaque(segment, offset, value);
        }
    }

    /** @return {@code name@0xaddress} */
    @Override
    public String toString() {
        return name + "@0x" + Long.toHexString(address());
    }
}
