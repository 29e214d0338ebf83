package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * An all-to-all with one block size: every member publishes its whole send buffer (inline, slot, or its keys past a
 * slot) and its receive buffer is filled with its own block of every other member's, in scatter-destination order
 * (member r reads r + 1, r + 2, … first, so no member's memory is everyone's first source).
 */
final class AlltoallTask extends FillTask {
    private final MemorySegment send;
    private final long sendKey;
    private final MemorySegment recv;
    private final long block;
    private final long total;

    AlltoallTask(ShmChannel ch, ShmCall call, MemorySegment send, long sendKey, MemorySegment recv, long recvKey) {
        super(ch, call, recv, recvKey);
        this.send = send;
        this.sendKey = sendKey;
        this.recv = recv;
        this.block = call.bytes();
        this.total = block * n;
    }

    @Override
    int publishData() {
        if (block == 0) {
            return ShmArea.PATH_NONE;
        }
        return total <= ch.slotBytes() ? publishCopy(send, total) : publishKeys(send, sendKey, null, 0);
    }

    @Override
    void copyOwn() {
        if (block > 0) {
            MemorySegment.copy(send, me * block, recv, me * block, block);
        }
    }

    @Override
    boolean exposesBuffers() {
        return total > ch.slotBytes();
    }
}
