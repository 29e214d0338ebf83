package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * An all-gather: every member publishes its block (inline, slot, or its send buffer's keys past a slot) and its
 * receive buffer is filled with every other member's block. In place when {@code send} is this rank's block of
 * {@code recv}.
 */
final class AllgatherTask extends FillTask {
    private final MemorySegment send;
    private final long sendKey;
    private final MemorySegment recv;
    private final long block;

    AllgatherTask(ShmChannel ch, ShmCall call, MemorySegment send, long sendKey, MemorySegment recv, long recvKey) {
        super(ch, call, recv, recvKey);
        this.send = send;
        this.sendKey = sendKey;
        this.recv = recv;
        this.block = call.bytes();
    }

    @Override
    int publishData() {
        if (block == 0) {
            return ShmArea.PATH_NONE;
        }
        return block <= ch.slotBytes() ? publishCopy(send, block) : publishKeys(send, sendKey, null, 0);
    }

    @Override
    void copyOwn() {
        if (block > 0 && send.address() != recv.address() + me * block) {
            MemorySegment.copy(send, 0, recv, me * block, block);
        }
    }

    @Override
    boolean exposesBuffers() {
        return block > ch.slotBytes();
    }
}
