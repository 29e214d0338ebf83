package dev.gdasync.libmp.coll.msccl;

import java.lang.foreign.MemorySegment;

/**
 * The receiving side of one connection of a blocking run: whether message q has arrived (the first one of a run is
 * checked for the sender's call), where it lies, and saying it is no longer needed so that its slot may be reused.
 */
abstract class RecvLink {
    /** The sending rank (in the communicator). */
    final int peer;

    RecvLink(int peer) {
        this.peer = peer;
    }

    /** Starts a run. */
    abstract void begin();

    /**
     * @return whether message q has arrived
     * @throws MscclRunException if the sender is in another call
     */
    abstract boolean arrived(long q);

    /** @return the segment the slots lie in */
    abstract MemorySegment slots();

    abstract long slotOffset(long q);

    /** Frees message q's slot. */
    abstract void consumed(long q);

    /** @return whether every consumed message has been acknowledged to the sender (the put path) */
    boolean drained() {
        return true;
    }

    abstract String waitingFor(long q);
}
