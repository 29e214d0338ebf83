package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;

/**
 * A pre-registered local buffer (CoGA's registered local cache): puts from it and gets into it move straight between
 * it and the owners' windows, with no copy through the runtime's staging memory. Pass {@link #segment()} (or a slice of
 * it) as the buffer of {@link GlobalArray#put}, {@link GlobalArray#get} and their relatives. Made by {@link
 * GlobalArrays#registeredBuffer(long)}; close it to free its memory.
 */
public final class GaBuffer implements AutoCloseable {
    private final GlobalArrays runtime;
    private final MemorySegment memory;
    final MpRegistration registration;
    private boolean closed;

    GaBuffer(GlobalArrays runtime, MemorySegment memory, MpRegistration registration) {
        this.runtime = runtime;
        this.memory = memory;
        this.registration = registration;
    }

    /**
     * @return the buffer's memory
     * @throws IllegalStateException if the buffer was closed
     */
    public MemorySegment segment() {
        if (closed) {
            throw new IllegalStateException("the registered buffer was closed");
        }
        return memory;
    }

    /** @return its length in bytes */
    public long byteSize() {
        return memory.byteSize();
    }

    /** Whether a segment lies inside this open buffer. */
    boolean contains(MemorySegment s) {
        long off = s.address() - memory.address();
        return !closed && s.isNative() && off >= 0 && off <= memory.byteSize() - s.byteSize();
    }

    /** Deregisters and frees the buffer, after finishing every operation still using runtime memory; idempotent. */
    @Override
    public void close() {
        if (!closed) {
            runtime.release(this);
            closed = true;
        }
    }
}
