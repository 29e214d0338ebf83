package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * A collective whose work is copying (bcast, allgather, alltoall, alltoallv): this rank publishes its data, and once
 * every member's call agreed its receive buffer is filled: its own block copied directly, the others' blocks from
 * their data by {@link Fill}. A disagreement therefore leaves the receive buffer as it was. On a
 * channel with a helper (the offload engine's collective proxy) the fill is claimed first: by this rank when it gets
 * there first (in test or wait), else by the helper, which fills the buffer while the rank computes and sets the
 * rank's done word; the rank then only waits for that word. A post claims nothing there, even when every member has
 * posted: the helper fills while the rank computes, and the rank claims what is left at its first test or wait
 * (before, the last member to post filled its own buffer inside the post, 30–150 µs at 1 MiB).
 */
abstract class FillTask extends ShmTask {
    private final MemorySegment recv;
    private final long recvKey;
    private boolean decided;
    private boolean mine;

    /**
     * @param recv    where this rank receives (a broadcast's buffer)
     * @param recvKey the key of a registration containing it
     */
    FillTask(ShmChannel ch, ShmCall call, MemorySegment recv, long recvKey) {
        super(ch, call);
        this.recv = recv;
        this.recvKey = recvKey;
    }

    /**
     * Publishes this rank's data (inline, slot, or its send buffer's keys with {@link #publishKeys}), its own block
     * included, so that a helper can fill that block too. Writes nothing into the receive buffer.
     *
     * @return the path
     */
    abstract int publishData();

    /** Copies this rank's own block into its receive buffer (after every member's call agreed). */
    abstract void copyOwn();

    @Override
    final int publishPayload() {
        int path = publishData();
        if (ch.assisted()) {
            // What a helper needs to fill this rank's buffer, and when the collective was posted (its grace).
            ch.own.recvKeys(seq, recv.address(), recvKey, recv.byteSize());
            ch.own.stamp(seq, System.nanoTime());
        }
        return path;
    }

    @Override
    final boolean work() {
        if (ch.assisted()) {
            if (!decided) {
                if (ch.posting()) {
                    return false; // a post leaves the fill to the helper until this rank tests or waits
                }
                mine = ch.own.claim(seq, false);
                decided = true;
            }
            if (!mine) {
                return doneBy(me); // the helper fills, then sets this rank's done word
            }
        }
        copyOwn();
        String why = Fill.run(ch.view(), me, seq, call, recv, false, false);
        if (why != null) {
            fail(why);
        }
        return true;
    }
}
