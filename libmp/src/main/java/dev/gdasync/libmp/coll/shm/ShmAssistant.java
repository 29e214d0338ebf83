package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * A helper's side of one communicator's channel (the offload engine's collective proxy, in a process of its own):
 * it maps every member's area and, while a member computes instead of testing, fills that member's receive buffer
 * for the copying collectives (bcast, allgather, alltoall, alltoallv) as soon as every member posted the same call,
 * then sets the member's done word. A member that comes to test or wait first claims its fill itself, so the helper
 * waits a short grace after the collective became ready before it claims; the claim (one compare-and-set in the
 * member's area) decides who fills. The helper leaves to the member anything doubtful (a buffer it cannot map, sizes
 * that disagree): the member finds and reports it.
 *
 * <p>{@link #pass} may be called from several helper threads at once: claims keep them from filling one buffer twice.
 */
public final class ShmAssistant {
    /** Maps a member's registered buffer into the helper's process. */
    @FunctionalInterface
    public interface Mapper {
        /**
         * @param member  the member's index in the communicator
         * @param address the buffer's address in the member's process
         * @param key     the key of a registration covering it
         * @param bytes   its length
         * @return the buffer mapped here, or null when it cannot be
         */
        MemorySegment map(int member, long address, long key, long bytes);
    }

    private final ShmArea[] areas;
    private final long graceNanos;
    private final FillView view;

    /**
     * @param areas      every member's area as mapped here, in communicator order
     * @param slotBytes  the channel's slot size (every member's)
     * @param mapper     maps the members' buffers
     * @param graceNanos how long a collective stays ready for its member before the helper claims its fill
     */
    public ShmAssistant(MemorySegment[] areas, long slotBytes, Mapper mapper, long graceNanos) {
        this.areas = new ShmArea[areas.length];
        for (int m = 0; m < areas.length; m++) {
            if (areas[m].byteSize() < ShmArea.bytesFor(slotBytes)) {
                throw new IllegalArgumentException("member " + m + "'s area holds " + areas[m].byteSize()
                        + " bytes, less than a channel with slots of " + slotBytes);
            }
            this.areas[m] = new ShmArea(areas[m], slotBytes);
        }
        this.graceNanos = graceNanos;
        this.view = new FillView(this.areas, mapper);
    }

    /**
     * One look at every member: fills each whose latest collective is ready, unclaimed and past the grace.
     *
     * @param now {@link System#nanoTime()}
     * @return how many buffers it filled
     */
    public int pass(long now) {
        int filled = 0;
        for (int r = 0; r < areas.length; r++) {
            if (fill(r, now)) {
                filled++;
            }
        }
        return filled;
    }

    private boolean fill(int r, long now) {
        ShmArea a = areas[r];
        // Fills happen in order: the member's next unfilled collective, if it published it and nobody claimed it.
        long k = a.done() + 1;
        if (a.seqOf(k) < k || a.claimed(k)) {
            return false;
        }
        long readyAt = 0;
        for (ShmArea m : areas) {
            if (m.seqOf(k) < k) {
                return false; // not every member posted it yet
            }
            readyAt = Math.max(readyAt, m.stampOf(k));
        }
        if (now - readyAt < graceNanos) {
            return false; // the member may be about to fill it itself
        }
        ShmCall call = a.callOf(k);
        if (!fillable(call, r)) {
            return false;
        }
        for (ShmArea m : areas) {
            if (!m.agrees(k, call)) {
                return false; // the members find the disagreement and report it
            }
        }
        long[] keys = a.keysOf(k, true);
        MemorySegment recv = keys[2] == 0 ? null : view.map(r, keys);
        if (recv == null || Fill.run(view, r, k, call, recv, true, true) != null || !a.claim(k, true)) {
            return false;
        }
        Fill.run(view, r, k, call, recv, false, true);
        a.setDone(k);
        return true;
    }

    private static boolean fillable(ShmCall call, int r) {
        if (call.kind() == null) {
            return false;
        }
        return switch (call.kind()) {
            case BCAST -> r != call.root();
            case ALLGATHER, ALLTOALL, ALLTOALLV -> true;
            default -> false;
        };
    }
}
