package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * What a filler ({@link Fill}) reads through: every member's area and a way to map a member's published buffer. The
 * rank's channel has one (its mappings of the other members); a helper's view of the same channel, in another
 * process, is another (its own mappings of every member).
 */
final class FillView {
    private final ShmArea[] areas;
    private final ShmAssistant.Mapper mapper;

    /**
     * @param areas  every member's area as this process maps it
     * @param mapper maps a member's registered buffer into this process
     */
    FillView(ShmArea[] areas, ShmAssistant.Mapper mapper) {
        this.areas = areas;
        this.mapper = mapper;
    }

    /** @return the number of members */
    int size() {
        return areas.length;
    }

    /** @return member m's area as this process maps it */
    ShmArea area(int m) {
        return areas[m];
    }

    /**
     * @param m    a member
     * @param keys address, key and bytes of a buffer that member published (bytes 0: none, an empty segment)
     * @return that buffer mapped here, or null when it cannot be
     */
    MemorySegment map(int m, long[] keys) {
        return keys[2] == 0 ? MemorySegment.NULL : mapper.map(m, keys[0], keys[1], keys[2]);
    }
}
