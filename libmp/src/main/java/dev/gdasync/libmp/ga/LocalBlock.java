package dev.gdasync.libmp.ga;

import java.lang.foreign.MemorySegment;

/**
 * Direct access to this rank's block of a global array ({@link GlobalArray#access()}, GA's {@code NGA_Access}):
 * the elements in row-major order, the last dimension contiguous, with leading dimensions the block's own extents.
 *
 * @param data  the block's elements (zero bytes when the rank holds nothing); valid until the array is destroyed
 * @param patch the block's index range, inclusive bounds
 */
public record LocalBlock(MemorySegment data, GaPatch patch) {
}
