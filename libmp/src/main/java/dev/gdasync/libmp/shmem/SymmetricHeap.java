package dev.gdasync.libmp.shmem;

import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The allocator of a symmetric heap: offsets only, no memory. Deterministic first fit over a free list, so PEs that
 * make the same calls in the same order get the same offsets: that is what makes the heap symmetric. Not thread-safe.
 */
final class SymmetricHeap {
    /** Every block starts on this boundary: 64-bit atomics and typed elements are aligned in every block. */
    static final long ALIGNMENT = 64;

    private final long base;
    private final long limit;
    /** Live blocks: offset to length asked (not rounded). */
    private final TreeMap<Long, Long> live = new TreeMap<>();
    /** Free ranges: offset to length, coalesced. */
    private final TreeMap<Long, Long> free = new TreeMap<>();

    /**
     * @param base  the first offset blocks may use (a multiple of {@link #ALIGNMENT})
     * @param limit one past the last offset blocks may use
     */
    SymmetricHeap(long base, long limit) {
        this.base = base;
        this.limit = limit;
        if (limit > base) {
            free.put(base, limit - base);
        }
    }

    /**
     * First fit: the free range with the lowest offset that holds {@code bytes} rounded up to {@link #ALIGNMENT} gives
     * its start; what it has beyond that stays free.
     *
     * @param bytes the length asked, {@code >= 1}
     * @return the offset of a new block of {@code bytes}, or -1 if no free range is large enough
     */
    long allocate(long bytes) {
        if (bytes < 1 || bytes > limit - base) {
            return -1;
        }
        long rounded = roundUp(bytes);
        for (Map.Entry<Long, Long> e : free.entrySet()) {
            // Copy key and length before removing: TreeMap deletes a node with two children by moving its successor's
            // key and value into it, so the entry would then describe the next free range.
            long at = e.getKey();
            long length = e.getValue();
            if (length >= rounded) {
                free.remove(at);
                if (length > rounded) {
                    free.put(at + rounded, length - rounded);
                }
                live.put(at, bytes);
                return at;
            }
        }
        return -1;
    }

    /** @return the length asked for the live block at {@code offset}, or -1 if no live block starts there */
    long liveLength(long offset) {
        Long len = live.get(offset);
        return len == null ? -1 : len;
    }

    /**
     * Frees the live block at {@code offset} (the caller checked it with {@link #liveLength}) and merges its range with
     * the free ranges that touch it, before and after, so that free ranges never touch each other.
     */
    void release(long offset) {
        Long asked = live.remove(offset);
        if (asked == null) {
            throw new IllegalArgumentException("no live block starts at heap offset " + offset);
        }
        long len = roundUp(asked);
        long start = offset;
        Map.Entry<Long, Long> before = free.floorEntry(offset);
        if (before != null && before.getKey() + before.getValue() == offset) {
            start = before.getKey();
            len += before.getValue();
            free.remove(start);
        }
        Long after = free.get(start + len);
        if (after != null) {
            free.remove(start + len);
            len += after;
        }
        free.put(start, len);
    }

    /**
     * @return the offset of the live block that holds all of {@code [offset, offset + bytes)}, or -1 if none does
     */
    long blockHolding(long offset, long bytes) {
        Map.Entry<Long, Long> e = live.floorEntry(offset);
        if (e == null || offset + bytes > e.getKey() + e.getValue()) {
            return -1;
        }
        return e.getKey();
    }

    /** @return the largest free range, in bytes */
    long largestFree() {
        long m = 0;
        for (long v : free.values()) {
            m = Math.max(m, v);
        }
        return m;
    }

    /** @return a copy of the free ranges, offset to length, in offset order (for checks and tests) */
    SortedMap<Long, Long> freeRanges() {
        return new TreeMap<>(free);
    }

    /** @return the number of live blocks */
    int liveBlocks() {
        return live.size();
    }

    long base() {
        return base;
    }

    long limit() {
        return limit;
    }

    private static long roundUp(long bytes) {
        return (bytes + ALIGNMENT - 1) & -ALIGNMENT;
    }
}
