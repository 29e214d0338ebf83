package dev.gdasync.libmp.shmem;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The checks every call of a PE's runtime makes on a symmetric address before it sends or changes anything: the PE
 * is in range, the bytes lie in one live block of the symmetric heap, an atomic word is aligned and whole. A refusal
 * names the rule and the address, and nothing has changed.
 */
final class HeapTargets {
    private final SymmetricHeap heap;
    private final MemorySegment heapMemory;
    private final int nPes;
    /** The runtime's own check that it is open and no KI launch is prepared, run before every target check. */
    private final Runnable requireOpen;

    HeapTargets(SymmetricHeap heap, MemorySegment heapMemory, int nPes, Runnable requireOpen) {
        this.heap = heap;
        this.heapMemory = heapMemory;
        this.nPes = nPes;
        this.requireOpen = requireOpen;
    }

    /** @return the heap offset of an 8-byte-aligned word in a live block, after checking the PE */
    long atomicTarget(MemorySegment word, int pe) {
        Objects.requireNonNull(word, "dest must not be null");
        requireOpen.run();
        requireAligned(word, 8, "the atomic word");
        long offset = target(word, 8, pe, "the atomic word");
        requireLength(word, 8, "64-bit");
        return offset;
    }

    /**
     * Refuses an element segment of p or g shorter than the element: the call would write or read bytes past the
     * segment's end (the block around it may still hold them, so the block check alone does not see it).
     */
    static void requireElement(MemorySegment m, int bytes, String what) {
        if (m.byteSize() < bytes) {
            throw new IllegalArgumentException(what + " " + describe(m) + " is shorter than its " + bytes
                    + "-byte element: pass a segment of at least " + bytes + " bytes");
        }
    }

    /**
     * Refuses a word segment shorter than its operand: the operation would change bytes past the segment's end (the
     * block around it may still hold them, so the block check alone does not see it).
     */
    static void requireLength(MemorySegment word, int bytes, String width) {
        if (word.byteSize() < bytes) {
            throw new IllegalArgumentException("the atomic word " + describe(word) + " is shorter than the " + bytes
                    + " bytes of a " + width + " word: pass a segment of at least " + bytes + " bytes");
        }
    }

    /**
     * @return the heap offset of {@code sym}'s start, after checking the PE and that {@code bytes} from there lie in
     *         one live block
     */
    long target(MemorySegment sym, long bytes, int pe, String what) {
        if (pe < 0 || pe >= nPes) {
            throw new IllegalArgumentException("PE " + pe + " is out of range: PEs are 0.." + (nPes - 1));
        }
        long offset = offsetIn(sym);
        if (offset < 0) {
            throw new IllegalArgumentException(what + " " + describe(sym) + " is not in the symmetric heap [0x"
                    + Long.toHexString(heapMemory.address() + heap.base()) + ", 0x"
                    + Long.toHexString(heapMemory.address() + heap.limit()) + ")");
        }
        if (heap.blockHolding(offset, bytes) < 0) {
            throw new IllegalArgumentException(what + ": " + bytes + " bytes at heap offset " + offset
                    + " are not inside one live block of the symmetric heap (freed, never allocated, or past a block's end)");
        }
        return offset;
    }

    /** @return the offset of a segment's start in the heap's user range, or -1 if it does not start there */
    long offsetIn(MemorySegment m) {
        if (m.isNative() && heapMemory.isNative()) {
            long off = m.address() - heapMemory.address();
            if (off >= heap.base() && off < heap.limit()) {
                return off;
            }
        }
        return -1;
    }

    void requireAligned(MemorySegment m, int alignment, String what) {
        if (m.isNative() && (m.address() & (alignment - 1)) != 0) {
            throw new IllegalArgumentException(what + " " + describe(m) + " is not " + alignment + "-byte aligned");
        }
    }

    static String describe(MemorySegment m) {
        return m.isNative() ? "0x" + Long.toHexString(m.address()) + " (" + m.byteSize() + " bytes)"
                : "a heap segment (" + m.byteSize() + " bytes)";
    }

    /** @return the heap offset of a 4-byte-aligned int in a live block, after checking the PE */
    long intTarget(MemorySegment word, int pe) {
        Objects.requireNonNull(word, "dest must not be null");
        requireOpen.run();
        requireAligned(word, 4, "the atomic word");
        long offset = target(word, 4, pe, "the atomic word");
        requireLength(word, 4, "32-bit");
        return offset;
    }
}
