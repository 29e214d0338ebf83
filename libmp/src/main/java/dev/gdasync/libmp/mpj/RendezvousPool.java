package dev.gdasync.libmp.mpj;

import java.util.Map;
import java.util.TreeMap;

/**
 * First-fit allocation of blocks in a rank's rendezvous area: where a large message waits (MPJ's packed buffer, or the
 * device's copy of it) until its receivers have read it. Blocks are rounded up to 64 bytes; freed neighbours merge.
 * Guarded by the device's lock.
 */
final class RendezvousPool {
    private static final long ALIGN = 64;

    private final long capacity;
    /** Free blocks: offset to length, no two adjacent. */
    private final TreeMap<Long, Long> free = new TreeMap<>();
    /**
     * Blocks of MPJ's own send buffers that receivers may still be reading (they read them in place, until their
     * programs are done with the message): by offset, {readers, the length to free once MPJ freed the block and the
     * last reader is done, or -1 while MPJ holds it}. MPJ may send one buffer to several ranks (a broadcast).
     */
    private final Map<Long, long[]> awaitingReader = new java.util.HashMap<>();
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

    /**
     * A block (MPJ's buffer, from {@link #allocate}) carries a message a receiver reads: it is not freed, whatever its
     * owner does, before {@link #readerDone}.
     */
    void holdForReader(long at) {
        awaitingReader.computeIfAbsent(at, k -> new long[] {0, -1})[0]++;
    }

    /** The block's owner (MPJ) freed it: freed now, or once its last reader is done. */
    void ownerFreed(long at, long bytes) {
        long[] held = awaitingReader.get(at);
        if (held != null) {
            held[1] = bytes;
        } else {
            release(at, bytes);
        }
    }

    /** A receiver is done with a block {@link #holdForReader} held: freed if it was the last and MPJ freed it. */
    void readerDone(long at) {
        long[] held = awaitingReader.get(at);
        if (held == null || --held[0] > 0) {
            return;
        }
        awaitingReader.remove(at);
        if (held[1] >= 0) {
            release(at, held[1]);
        }
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
