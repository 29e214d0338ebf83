package dev.gdasync.libmp.coll.msccl;

import java.lang.foreign.MemorySegment;

/**
 * The sending side of one connection of a blocking run, as its thread block uses it: whether message q may be
 * written now, where it goes, and how it is published. The direct path writes into the receiver's slot (or its
 * buffer) mapped here and stores the flag; the put path fills a staging slot that the caller's thread puts.
 * Message numbers start at 1 in every run; message q uses slot {@code (q − 1) mod slots}.
 */
abstract class SendLink {
    /** The receiving rank (in the communicator) and its thread block. */
    final int peer;
    final int peerTb;

    SendLink(int peer, int peerTb) {
        this.peer = peer;
        this.peerTb = peerTb;
    }

    /**
     * Starts a run.
     *
     * @param receiverFree whether the receiver is known to have finished every call that used the slots this run
     *                     uses (so the sender need not look)
     */
    abstract void begin(boolean receiverFree);

    /**
     * @param q      the message
     * @param direct whether it lands in the receiver's buffer instead of a slot
     * @return whether it may be written now (its slot is free; for a direct one, the receiver is in this run)
     * @throws MscclRunException if the receiver is in another call
     */
    abstract boolean ready(long q, boolean direct);

    /** @return the segment message q's slot lies in */
    abstract MemorySegment slots();

    /** @return where message q's slot starts in {@link #slots} */
    abstract long slotOffset(long q);

    /**
     * @param output the receiver's output buffer, else its input buffer
     * @return that buffer of the receiver in this run, mapped here (direct messages only)
     * @throws MscclRunException if it cannot be mapped
     */
    MemorySegment peerBuffer(boolean output) {
        throw new IllegalStateException("this connection has no direct messages");
    }

    /** Makes message q of {@code bytes} visible to the receiver. */
    abstract void publish(long q, long bytes);

    /** @return whether everything it published has left (the put path: acknowledged); the run may end then */
    abstract boolean drained();

    /** @return what message q waits for, for a timeout's message */
    abstract String waitingFor(long q, boolean direct);
}
