package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An all-to-all with a count and a displacement per member: each member publishes a table in its slot (for every
 * member: where the bytes it sends there start and how many there are, where the bytes it receives from there land
 * and how many it expects) followed by the bytes themselves when they all fit, else its send buffer's keys (the
 * table then gives displacements in that buffer). A filler checks that what a member sends is what the receiver
 * expects; a difference fails the receiver's request and leaves that block unwritten, and the collective goes on so
 * that the members stay in step.
 */
final class AlltoallvTask extends FillTask {
    private final MemorySegment send;
    private final long sendKey;
    private final long[] sendCounts;
    private final long[] sendDispls;
    private final MemorySegment recv;
    private final long[] recvCounts;
    private final long[] recvDispls;
    private boolean mapped;

    AlltoallvTask(ShmChannel ch, ShmCall call, MemorySegment send, long sendKey, long[] sendCounts, long[] sendDispls,
                  MemorySegment recv, long recvKey, long[] recvCounts, long[] recvDispls) {
        super(ch, call, recv, recvKey);
        this.send = send;
        this.sendKey = sendKey;
        this.sendCounts = sendCounts;
        this.sendDispls = sendDispls;
        this.recv = recv;
        this.recvCounts = recvCounts;
        this.recvDispls = recvDispls;
    }

    @Override
    int publishData() {
        MemorySegment slot = ch.own.slot(seq);
        long table = Fill.ENTRY * n;
        long total = 0;
        for (int m = 0; m < n; m++) {
            total += sendCounts[m]; // this rank's own block too, for a helper that fills it
        }
        mapped = table + total > ch.slotBytes();
        long at = table;
        for (int m = 0; m < n; m++) {
            long count = sendCounts[m];
            long e = Fill.ENTRY * m;
            slot.set(ValueLayout.JAVA_LONG, e, mapped ? sendDispls[m] : at);
            slot.set(ValueLayout.JAVA_LONG, e + 8, count);
            slot.set(ValueLayout.JAVA_LONG, e + 16, recvDispls[m]);
            slot.set(ValueLayout.JAVA_LONG, e + 24, recvCounts[m]);
            if (!mapped && count > 0) {
                MemorySegment.copy(send, sendDispls[m], slot, at, count);
                at += count;
            }
        }
        return mapped ? publishKeys(send, sendKey, null, 0) : ShmArea.PATH_SLOT;
    }

    @Override
    void copyOwn() {
        MemorySegment.copy(send, sendDispls[me], recv, recvDispls[me], recvCounts[me]);
    }

    @Override
    boolean exposesBuffers() {
        return mapped;
    }
}
