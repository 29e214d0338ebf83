package dev.gdasync.gdsync.memop;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A memory operation: the only kind of work a stream or a kernel agent executes for the network.
 *
 * <p>A send becomes writes to a doorbell record and a doorbell; a wait for a completion becomes a
 * WAIT on the completion's validity word and a write that releases it. Memops are immutable and
 * validated when they are made, so an executor never meets a malformed one.
 */
public sealed interface Memop {

    /** The most bytes a {@link WriteMemory} may carry, as CUDA's inline-copy memop. */
    int MAX_WRITE_MEMORY_BYTES = 256;

    /**
     * Stores a 32-bit value.
     *
     * @param target  the word
     * @param value   the value
     * @param barrier whether every earlier write of the executor is visible system-wide first
     */
    record Write32(MemoryWord target, int value, boolean barrier) implements Memop {
        /**
         * @throws NullPointerException     if the target is null
         * @throws IllegalArgumentException if the target is not a 32-bit word
         */
        public Write32 {
            requireWidth(target, 4, "WRITE32");
        }
    }

    /**
     * Stores a 64-bit value and, when the value is a doorbell, lets a host executor ring it by a call.
     *
     * @param target   the word
     * @param value    the value
     * @param barrier  whether every earlier write of the executor is visible system-wide first
     * @param doorbell called by host executors after the store, or {@code null} for a plain store
     */
    record Write64(MemoryWord target, long value, boolean barrier, Doorbell doorbell) implements Memop {
        /**
         * @throws NullPointerException     if the target is null
         * @throws IllegalArgumentException if the target is not a 64-bit word
         */
        public Write64 {
            requireWidth(target, 8, "WRITE64");
        }

        /**
         * A plain 64-bit store.
         *
         * @param target  the word
         * @param value   the value
         * @param barrier whether earlier writes are visible first
         */
        public Write64(MemoryWord target, long value, boolean barrier) {
            this(target, value, barrier, null);
        }
    }

    /**
     * Blocks the executor until a 32-bit word satisfies a condition.
     *
     * @param target    the word
     * @param value     the operand
     * @param condition the condition
     * @param flush     whether a GPU executor flushes remote (GPUDirect RDMA) writes after the wait,
     *                  as CUDA's {@code CU_STREAM_WAIT_VALUE_FLUSH}; host executors need no flush
     * @param progress  what a host executor runs between looks at the word (the NIC whose transport writes
     *                  it needs progress calls), or {@code null}; GPU executors ignore it
     * @param tally     where a host executor counts the wait and its time (the NIC that prepared it), or
     *                  {@code null}; GPU executors ignore it
     */
    record Wait32(MemoryWord target, int value, WaitCondition condition, boolean flush, WaitProgress progress,
                  WaitTally tally) implements Memop {
        /**
         * @throws NullPointerException     if the target or the condition is null
         * @throws IllegalArgumentException if the target is not a 32-bit word
         */
        public Wait32 {
            requireWidth(target, 4, "WAIT32");
            Objects.requireNonNull(condition, "condition must not be null");
        }

        /**
         * A wait that nobody counts.
         *
         * @param target    the word
         * @param value     the operand
         * @param condition the condition
         * @param flush     whether a GPU executor flushes remote writes after the wait
         * @param progress  what a host executor runs between looks at the word, or {@code null}
         */
        public Wait32(MemoryWord target, int value, WaitCondition condition, boolean flush, WaitProgress progress) {
            this(target, value, condition, flush, progress, null);
        }

        /**
         * A wait that nothing needs to progress.
         *
         * @param target    the word
         * @param value     the operand
         * @param condition the condition
         * @param flush     whether a GPU executor flushes remote writes after the wait
         */
        public Wait32(MemoryWord target, int value, WaitCondition condition, boolean flush) {
            this(target, value, condition, flush, null);
        }

        /**
         * A wait without a trailing flush.
         *
         * @param target    the word
         * @param value     the operand
         * @param condition the condition
         */
        public Wait32(MemoryWord target, int value, WaitCondition condition) {
            this(target, value, condition, false);
        }
    }

    /**
     * Blocks the executor until a 64-bit word satisfies a condition.
     *
     * @param target    the word
     * @param value     the operand
     * @param condition the condition
     * @param flush     whether a GPU executor flushes remote writes after the wait
     * @param progress  what a host executor runs between looks at the word, or {@code null}
     */
    record Wait64(MemoryWord target, long value, WaitCondition condition, boolean flush, WaitProgress progress)
            implements Memop {
        /**
         * @throws NullPointerException     if the target or the condition is null
         * @throws IllegalArgumentException if the target is not a 64-bit word
         */
        public Wait64 {
            requireWidth(target, 8, "WAIT64");
            Objects.requireNonNull(condition, "condition must not be null");
        }

        /**
         * A wait that nothing needs to progress.
         *
         * @param target    the word
         * @param value     the operand
         * @param condition the condition
         * @param flush     whether a GPU executor flushes remote writes after the wait
         */
        public Wait64(MemoryWord target, long value, WaitCondition condition, boolean flush) {
            this(target, value, condition, flush, null);
        }

        /**
         * A wait without a trailing flush.
         *
         * @param target    the word
         * @param value     the operand
         * @param condition the condition
         */
        public Wait64(MemoryWord target, long value, WaitCondition condition) {
            this(target, value, condition, false);
        }
    }

    /**
     * Copies a few staged bytes into memory. The bytes are copied when the memop is made, so the
     * caller's array can be reused at once.
     *
     * @param target  the destination segment
     * @param offset  the byte offset in it
     * @param data    at most {@value #MAX_WRITE_MEMORY_BYTES} bytes
     * @param barrier whether every earlier write of the executor is visible system-wide first
     */
    record WriteMemory(MemorySegment target, long offset, byte[] data, boolean barrier) implements Memop {
        /**
         * @throws NullPointerException      if the target or the data are null
         * @throws IllegalArgumentException  if the segment is not native or there are too many bytes
         * @throws IndexOutOfBoundsException if the bytes do not fit in the segment at the offset
         */
        public WriteMemory {
            Objects.requireNonNull(target, "target must not be null");
            Objects.requireNonNull(data, "data must not be null");
            if (!target.isNative()) {
                throw new IllegalArgumentException("WRITE_MEMORY needs a native destination segment");
            }
            if (data.length > MAX_WRITE_MEMORY_BYTES) {
                throw new IllegalArgumentException("WRITE_MEMORY carries at most " + MAX_WRITE_MEMORY_BYTES
                        + " bytes, got " + data.length);
            }
            if (offset < 0 || offset > target.byteSize() - data.length) {
                throw new IndexOutOfBoundsException("WRITE_MEMORY of " + data.length + " bytes at offset " + offset
                        + " does not fit in a segment of " + target.byteSize() + " bytes");
            }
            data = data.clone();
        }

        /** @return a copy of the staged bytes */
        @Override
        public byte[] data() {
            return data.clone();
        }

        /** @return the number of staged bytes */
        public int length() {
            return data.length;
        }

        /** Equal when target, offset, barrier and the staged bytes are equal. */
        @Override
        public boolean equals(Object o) {
            return o instanceof WriteMemory w && target.equals(w.target) && offset == w.offset && barrier == w.barrier
                    && java.util.Arrays.equals(data, w.data);
        }

        @Override
        public int hashCode() {
            return (target.hashCode() * 31 + Long.hashCode(offset)) * 31 + java.util.Arrays.hashCode(data) + (barrier ? 1 : 0);
        }

        @Override
        public String toString() {
            return "WriteMemory[target=" + target + ", offset=" + offset + ", bytes=" + data.length + ", barrier=" + barrier + "]";
        }

        /**
         * Copies the staged bytes into a segment without exposing the array.
         *
         * @param dst       destination
         * @param dstOffset offset in it
         */
        void copyTo(MemorySegment dst, long dstOffset) {
            MemorySegment.copy(MemorySegment.ofArray(data), 0, dst, dstOffset, data.length);
        }
    }

    /**
     * A memory barrier: writes before it are visible at the scope before anything after it runs.
     *
     * @param scope how far the writes must be visible
     */
    record Barrier(BarrierScope scope) implements Memop {
        /** @throws NullPointerException if the scope is null */
        public Barrier {
            Objects.requireNonNull(scope, "scope must not be null");
        }
    }

    private static void requireWidth(MemoryWord target, int width, String op) {
        Objects.requireNonNull(target, "target must not be null");
        if (target.width() != width) {
            throw new IllegalArgumentException(op + " needs a " + (width * 8) + "-bit word, got a "
                    + (target.width() * 8) + "-bit word " + target);
        }
    }
}
