package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * A broadcast: the root publishes its bytes (inline or in its slot, or, past a slot, its buffer's keys) and every
 * other member's buffer is filled from the root's memory. Only the root's buffer is read by others, so only the root
 * waits for the others' done words (on the mapped path).
 */
final class BcastTask extends FillTask {
    private final MemorySegment buf;
    private final long key;
    private final int root;
    private final long bytes;

    BcastTask(ShmChannel ch, ShmCall call, MemorySegment buf, long key) {
        super(ch, call, buf, key);
        this.buf = buf;
        this.key = key;
        this.root = call.root();
        this.bytes = call.bytes();
    }

    @Override
    void copyOwn() {
        // the root's buffer is its own block; the others have none
    }

    @Override
    int publishData() {
        if (me != root || bytes == 0) {
            return ShmArea.PATH_NONE;
        }
        return bytes <= ch.slotBytes() ? publishCopy(buf, bytes) : publishKeys(buf, key, null, 0);
    }

    @Override
    boolean exposesBuffers() {
        return me == root && bytes > ch.slotBytes();
    }
}
