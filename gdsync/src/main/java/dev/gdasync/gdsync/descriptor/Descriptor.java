package dev.gdasync.gdsync.descriptor;

import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.WaitRequest;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * One unit of prepared work for a stream (LibGDSync's {@code gds_descriptor_t}). A list of descriptors
 * is translated into one batch of memops by {@link Descriptors}.
 */
public sealed interface Descriptor {

    /**
     * Rings a prepared send.
     *
     * @param request the send
     */
    record Send(SendRequest request) implements Descriptor {
        /** @throws NullPointerException if the request is null */
        public Send {
            Objects.requireNonNull(request, "request must not be null");
        }
    }

    /**
     * Waits for a completion and releases it to the CPU.
     *
     * @param request the wait
     */
    record Wait(WaitRequest request) implements Descriptor {
        /** @throws NullPointerException if the request is null */
        public Wait {
            Objects.requireNonNull(request, "request must not be null");
        }
    }

    /**
     * Waits until a 32-bit word satisfies a condition.
     *
     * @param word      the word
     * @param value     the operand
     * @param condition the condition
     * @param flags     0 or {@link DescriptorFlags#WAIT_POST_FLUSH}
     * @param progress  what a host executor runs between looks at the word (the NIC whose transport writes
     *                  it), or {@code null}
     */
    record WaitValue32(MemoryWord word, int value, WaitCondition condition, int flags, WaitProgress progress)
            implements Descriptor {
        /**
         * @throws NullPointerException     if the word or the condition is null
         * @throws IllegalArgumentException if the word is not 32-bit or a flag is unknown
         */
        public WaitValue32 {
            Objects.requireNonNull(word, "word must not be null");
            Objects.requireNonNull(condition, "condition must not be null");
            if (word.width() != 4) {
                throw new IllegalArgumentException("WAIT_VALUE32 needs a 32-bit word, got " + word);
            }
            DescriptorFlags.check(flags, DescriptorFlags.WAIT_POST_FLUSH, "WAIT_VALUE32");
        }

        /**
         * A wait on a word that nothing needs to progress.
         *
         * @param word      the word
         * @param value     the operand
         * @param condition the condition
         * @param flags     0 or {@link DescriptorFlags#WAIT_POST_FLUSH}
         */
        public WaitValue32(MemoryWord word, int value, WaitCondition condition, int flags) {
            this(word, value, condition, flags, null);
        }
    }

    /**
     * Writes a 32-bit word.
     *
     * @param word  the word
     * @param value the value
     * @param flags 0 or {@link DescriptorFlags#WRITE_PRE_BARRIER}
     */
    record WriteValue32(MemoryWord word, int value, int flags) implements Descriptor {
        /**
         * @throws NullPointerException     if the word is null
         * @throws IllegalArgumentException if the word is not 32-bit or a flag is unknown
         */
        public WriteValue32 {
            Objects.requireNonNull(word, "word must not be null");
            if (word.width() != 4) {
                throw new IllegalArgumentException("WRITE_VALUE32 needs a 32-bit word, got " + word);
            }
            DescriptorFlags.check(flags, DescriptorFlags.WRITE_PRE_BARRIER, "WRITE_VALUE32");
        }
    }

    /**
     * Copies up to {@value Memop#MAX_WRITE_MEMORY_BYTES} staged bytes; the array is copied at once.
     *
     * @param target the destination segment
     * @param offset the offset in it
     * @param data   the bytes
     * @param flags  {@link DescriptorFlags#WRITE_MEMORY_PRE_BARRIER} and/or {@link DescriptorFlags#WRITE_MEMORY_POST_BARRIER}
     */
    record WriteMemory(MemorySegment target, long offset, byte[] data, int flags) implements Descriptor {
        /**
         * @throws NullPointerException      if the target or the data are null
         * @throws IllegalArgumentException  if the data are too long, the target is not native, or a flag is unknown
         * @throws IndexOutOfBoundsException if the data do not fit in the target at the offset
         */
        public WriteMemory {
            Objects.requireNonNull(target, "target must not be null");
            Objects.requireNonNull(data, "data must not be null");
            DescriptorFlags.check(flags, DescriptorFlags.WRITE_MEMORY_PRE_BARRIER | DescriptorFlags.WRITE_MEMORY_POST_BARRIER,
                    "WRITE_MEMORY");
            // Validates bounds and size, and stages the bytes.
            data = new Memop.WriteMemory(target, offset, data, false).data();
        }

        /** @return a copy of the staged bytes */
        @Override
        public byte[] data() {
            return data.clone();
        }

        /** Equal when target, offset, flags and the staged bytes are equal. */
        @Override
        public boolean equals(Object o) {
            return o instanceof WriteMemory w && target.equals(w.target) && offset == w.offset && flags == w.flags
                    && java.util.Arrays.equals(data, w.data);
        }

        @Override
        public int hashCode() {
            return ((target.hashCode() * 31 + Long.hashCode(offset)) * 31 + java.util.Arrays.hashCode(data)) * 31 + flags;
        }

        @Override
        public String toString() {
            return "WriteMemory[target=" + target + ", offset=" + offset + ", bytes=" + data.length + ", flags=" + flags + "]";
        }
    }
}
