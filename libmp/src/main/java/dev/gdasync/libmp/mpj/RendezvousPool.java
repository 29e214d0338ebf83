package dev.gdasync.libmp.mpj;

import java.util.Map;
import java.util.TreeMap;

/**
 * First-fit allocation of blocks in a rank's rendezvous area: where a large message waits, copied once, until the
 * receiver has read it. Blocks are rounded up to 64 bytes; freed neighbours merge. Guarded by the device's lock.
 */
final class RendezvousPool {
    private static final long ALIGN = 64;

    private final long capacity;
    /** Free blocks: offset to length, no two adjacent. */
    private final TreeMap<Long, Long> free = new TreeMap<>();
    private long used;

    /** @param capacity the area's length in bytes (0: no rendezvous) */
    RendezvousPool(long capacity) {
        this.capacity = capacity;
        if (capacity > 0) {
            free.put(0L, capacity);
        }
    }

    /**
     * @param bytes a message's length, &gt; 0
     * @return the offset of a block of at least that length, or -1 when no free block is large enough now
     */
    long allocate(long bytes) {
        long n = (bytes + ALIGN - 1) & -ALIGN;
        for (Map.Entry<Long, Long> e : free.entrySet()) {
            if (e.getValue() >= n) {
                long at = e.getKey();
                free.remove(at);
                if (e.getValue() > n) {
                    free.put(at + n, e.getValue() - n);
                }
                used += n;
                return at;
            }
        }
        return -1;
    }

    /**
     * Frees a block {@link #allocate} returned.
     *
     * @param at    its offset
     * @param bytes the length it was asked for
     */
    void release(long at, long bytes) {
        long n = (bytes + ALIGN - 1) & -ALIGN;
        used -= n;
        long start = at;
        long length = n;
        Map.Entry<Long, Long> below = free.floorEntry(at);
        if (below != null && below.getKey() + below.getValue() == at) {
            start = below.getKey();
            length += below.getValue();
            free.remove(below.getKey());
        }
        Long next = free.containsKey(at + n) ? at + n : null;
        if (next != null) {
            length += free.remove(next);
        }
        free.put(start, length);
    }

    /** @return the area's length */
    long capacity() {
        return capacity;
    }

    /** @return the bytes held by messages not yet read by their receivers */
    long used() {
        return used;
    }
}
