package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An all-to-all with a count and a displacement per member: each member publishes a table in its slot (for every
 * destination, where its bytes start and how many there are) followed by the bytes themselves when they all fit,
 * else its send buffer's keys (the table then gives displacements in that buffer). A reader checks that what a
 * member sends it is what it expects; a difference fails the reader's request and leaves that block unwritten, and
 * the collective goes on so that the members stay in step.
 */
final class AlltoallvTask extends ShmTask {
    private static final long ENTRY = 16;

    private final MemorySegment send;
    private final long sendKey;
    private final long[] sendCounts;
    private final long[] sendDispls;
    private final MemorySegment recv;
    private final long[] recvCounts;
    private final long[] recvDispls;
    private boolean mapped;

    AlltoallvTask(ShmChannel ch, ShmCall call, MemorySegment send, long sendKey, long[] sendCounts, long[] sendDispls,
                  MemorySegment recv, long[] recvCounts, long[] recvDispls) {
        super(ch, call);
        this.send = send;
        this.sendKey = sendKey;
        this.sendCounts = sendCounts;
        this.sendDispls = sendDispls;
        this.recv = recv;
        this.recvCounts = recvCounts;
        this.recvDispls = recvDispls;
    }

    @Override
    int publishPayload() {
        MemorySegment slot = ch.own.slot(seq);
        long table = ENTRY * n;
        long total = 0;
        for (int m = 0; m < n; m++) {
            total += m == me ? 0 : sendCounts[m];
        }
        mapped = table + total > ch.slotBytes();
        long at = table;
        for (int m = 0; m < n; m++) {
            long count = m == me ? 0 : sendCounts[m];
            slot.set(ValueLayout.JAVA_LONG, ENTRY * m, mapped ? sendDispls[m] : at);
            slot.set(ValueLayout.JAVA_LONG, ENTRY * m + 8, count);
            if (!mapped && count > 0) {
                MemorySegment.copy(send, sendDispls[m], slot, at, count);
                at += count;
            }
        }
        return mapped ? publishKeys(send, sendKey, null, 0) : ShmArea.PATH_SLOT;
    }

    @Override
    boolean work() {
        MemorySegment.copy(send, sendDispls[me], recv, recvDispls[me], recvCounts[me]);
        for (int k = 1; k < n; k++) {
            int m = (me + k) % n;
            MemorySegment table = ch.areas[m].slot(seq);
            long from = table.get(ValueLayout.JAVA_LONG, ENTRY * me);
            long count = table.get(ValueLayout.JAVA_LONG, ENTRY * me + 8);
            if (count != recvCounts[m]) {
                fail(who(m) + " sends " + count + " bytes to rank " + me + " but rank " + me + " expects "
                        + recvCounts[m] + " from it; the block was not written");
                continue;
            }
            if (count == 0) {
                continue;
            }
            MemorySegment src = ch.areas[m].pathOf(seq) == ShmArea.PATH_MAPPED ? payload(m, from + count, false) : table;
            if (src != null) {
                MemorySegment.copy(src, from, recv, recvDispls[m], count);
            }
        }
        return true;
    }

    @Override
    boolean exposesBuffers() {
        return mapped;
    }
}
