package dev.gdasync.ki.kernels;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A copy between two native buffers of equal size: the unit of {@link KiCopyWork}.
 *
 * @param from the source
 * @param to   the destination
 */
public record KiCopy(MemorySegment from, MemorySegment to) {
    /** @throws IllegalArgumentException if a buffer is not native or the sizes differ */
    public KiCopy {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (!from.isNative() || !to.isNative()) {
            throw new IllegalArgumentException("KI copies move native memory only");
        }
        if (from.byteSize() != to.byteSize()) {
            throw new IllegalArgumentException("a KI copy needs buffers of one size, got " + from.byteSize() + " and "
                    + to.byteSize() + " bytes");
        }
    }

    /** @return bytes copied */
    public long bytes() {
        return from.byteSize();
    }
}
