package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * An all-to-all with one block size: every member publishes its whole send buffer (inline, slot, or its keys past a
 * slot) and copies its own block out of every other member's, in scatter-destination order (member r reads r + 1,
 * r + 2, … first, so no member's memory is everyone's first source).
 */
final class AlltoallTask extends ShmTask {
    private final MemorySegment send;
    private final long sendKey;
    private final MemorySegment recv;
    private final long block;
    private final long total;

    AlltoallTask(ShmChannel ch, ShmCall call, MemorySegment send, long sendKey, MemorySegment recv) {
        super(ch, call);
        this.send = send;
        this.sendKey = sendKey;
        this.recv = recv;
        this.block = call.bytes();
        this.total = block * n;
    }

    @Override
    int publishPayload() {
        if (block == 0) {
            return ShmArea.PATH_NONE;
        }
        return total <= ch.slotBytes() ? publishCopy(send, total) : publishKeys(send, sendKey, null, 0);
    }

    @Override
    boolean work() {
        if (block == 0) {
            return true;
        }
        MemorySegment.copy(send, me * block, recv, me * block, block);
        for (int k = 1; k < n; k++) {
            int m = (me + k) % n;
            MemorySegment from = payload(m, total, false);
            if (from != null) {
                MemorySegment.copy(from, me * block, recv, m * block, block);
            }
        }
        return true;
    }

    @Override
    boolean exposesBuffers() {
        return total > ch.slotBytes();
    }
}
