package dev.gdasync.libmp.ga;

/**
 * The bookkeeping of the GA runtime's staging memory (offsets only, no memory): each operation that stages data
 * holds one part, taken after the parts held already (a bump allocator), until it finishes; when the last holder
 * finishes, the whole space is free again. Parts held at the same time never overlap and always lie inside the
 * space. The memory may only be replaced by a larger one while nothing is held. Not thread-safe.
 */
final class StagingSpace {
    private long capacity;
    private long used;
    private int holders;

    /** @param capacity the bytes of the staging memory, {@code >= 0} */
    StagingSpace(long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, got " + capacity);
        }
        this.capacity = capacity;
    }

    /**
     * Takes a part for one more holder.
     *
     * @param bytes the part's length, {@code >= 1}
     * @return the part's offset, or -1 if it does not fit after the parts held now (nothing changes then)
     */
    long reserve(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("bytes must be >= 1, got " + bytes);
        }
        if (bytes > capacity - used) {
            return -1;
        }
        long at = used;
        used += bytes;
        holders++;
        return at;
    }

    /** A holder finished with its part; after the last one the whole space is free. */
    void release() {
        if (holders == 0) {
            throw new IllegalStateException("staging: no part is held, so none can be given back");
        }
        if (--holders == 0) {
            used = 0;
        }
    }

    /**
     * Records that the memory was replaced by a larger one.
     *
     * @param newCapacity the new memory's bytes, not less than now
     * @throws IllegalStateException if a part is held: its holder still uses the old memory
     */
    void grow(long newCapacity) {
        if (holders != 0) {
            throw new IllegalStateException("staging: cannot replace the memory while " + holders + " parts are held");
        }
        if (newCapacity < capacity) {
            throw new IllegalArgumentException("staging may only grow: " + newCapacity + " < " + capacity);
        }
        capacity = newCapacity;
    }

    long capacity() {
        return capacity;
    }

    /** @return bytes from offset 0 that parts held now may use */
    long used() {
        return used;
    }

    int holders() {
        return holders;
    }
}
