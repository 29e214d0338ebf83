package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * A broadcast: the root publishes its bytes (inline or in its slot, or, past a slot, its buffer's keys) and every
 * other member copies them into its own buffer, straight from the root's memory. Only the root's buffer is read by
 * others, so only the root waits for the others' done words (on the mapped path).
 */
final class BcastTask extends ShmTask {
    private final MemorySegment buf;
    private final long key;
    private final int root;
    private final long bytes;

    BcastTask(ShmChannel ch, ShmCall call, MemorySegment buf, long key) {
        super(ch, call);
        this.buf = buf;
        this.key = key;
        this.root = call.root();
        this.bytes = call.bytes();
    }

    @Override
    int publishPayload() {
        if (me != root || bytes == 0) {
            return ShmArea.PATH_NONE;
        }
        return bytes <= ch.slotBytes() ? publishCopy(buf, bytes) : publishKeys(buf, key, null, 0);
    }

    @Override
    boolean work() {
        if (me != root && bytes > 0) {
            MemorySegment from = payload(root, bytes, false);
            if (from != null) {
                MemorySegment.copy(from, 0, buf, 0, bytes);
            }
        }
        return true;
    }

    @Override
    boolean exposesBuffers() {
        return me == root && bytes > ch.slotBytes();
    }
}
