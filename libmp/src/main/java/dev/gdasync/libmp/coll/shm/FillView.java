package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * What a filler ({@link Fill}) reads through: every member's area and a way to map a member's published buffer. The
 * rank's channel is one (its mappings of the other members); a helper's view of the same channel, in another
 * process, is another (its own mappings of every member).
 */
interface FillView {
    /** @return the number of members */
    int size();

    /** @return member m's area as this process maps it */
    ShmArea area(int m);

    /**
     * @param m    a member
     * @param keys address, key and bytes of a buffer that member published
     * @return that buffer mapped here, or null when it cannot be
     */
    MemorySegment map(int m, long[] keys);
}
