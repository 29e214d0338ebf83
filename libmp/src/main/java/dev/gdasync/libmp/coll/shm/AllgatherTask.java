package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * An all-gather: every member publishes its block (inline, slot, or its send buffer's keys past a slot) and copies
 * every other member's block into its receive buffer. In place when {@code send} is this rank's block of
 * {@code recv}.
 */
final class AllgatherTask extends ShmTask {
    private final MemorySegment send;
    private final long sendKey;
    private final MemorySegment recv;
    private final long block;

    AllgatherTask(ShmChannel ch, ShmCall call, MemorySegment send, long sendKey, MemorySegment recv) {
        super(ch, call);
        this.send = send;
        this.sendKey = sendKey;
        this.recv = recv;
        this.block = call.bytes();
    }

    @Override
    int publishPayload() {
        if (block == 0) {
            return ShmArea.PATH_NONE;
        }
        return block <= ch.slotBytes() ? publishCopy(send, block) : publishKeys(send, sendKey, null, 0);
    }

    @Override
    boolean work() {
        if (block == 0) {
            return true;
        }
        if (send.address() != recv.address() + me * block) {
            MemorySegment.copy(send, 0, recv, me * block, block);
        }
        for (int k = 1; k < n; k++) {
            int m = (me + k) % n;
            MemorySegment from = payload(m, block, false);
            if (from != null) {
                MemorySegment.copy(from, 0, recv, m * block, block);
            }
        }
        return true;
    }

    @Override
    boolean exposesBuffers() {
        return block > ch.slotBytes();
    }
}
