package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * How a reduction combines two vectors: {@code acc[i] = acc[i] ∘ in[i]} for {@code count} elements (the caller's
 * element type and operator, so this package needs neither).
 */
@FunctionalInterface
public interface Combiner {
    /**
     * @param acc   the left operand and the result, at least {@code count} elements
     * @param in    the right operand, at least {@code count} elements
     * @param count elements
     */
    void combine(MemorySegment acc, MemorySegment in, long count);
}
