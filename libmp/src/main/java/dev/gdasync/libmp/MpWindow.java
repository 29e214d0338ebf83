package dev.gdasync.libmp;

import java.lang.foreign.MemorySegment;

/**
 * A window for one-sided communication (LibMP's {@code mp_window_t}): every rank's exposed buffer,
 * known to every rank. Created and destroyed collectively.
 */
public final class MpWindow {
    final MpContext owner;
    final MpRegistration local;
    final MemorySegment buffer;
    final long[] addresses;
    final long[] rkeys;
    final long[] sizes;
    boolean destroyed;

    MpWindow(MpContext owner, MpRegistration local, MemorySegment buffer, long[] addresses, long[] rkeys, long[] sizes) {
        this.owner = owner;
        this.local = local;
        this.buffer = buffer;
        this.addresses = addresses;
        this.rkeys = rkeys;
        this.sizes = sizes;
    }

    /**
     * @param mp the Mp it is used with
     * @throws IllegalArgumentException if it is another Mp's
     */
    void checkOwner(MpContext mp) {
        if (owner != mp) {
            throw new IllegalArgumentException("the window belongs to another Mp");
        }
    }

    /** @return this rank's exposed buffer */
    public MemorySegment buffer() {
        return buffer;
    }

    /**
     * @param rank a rank
     * @return the size of that rank's exposed buffer: exactly the {@code byteSize()} of the buffer it created the
     *         window over
     * @throws IllegalArgumentException if the rank is not a rank of the job
     */
    public long size(int rank) {
        return sizes[checkRank(rank)];
    }

    /**
     * @param rank a rank
     * @return the address of that rank's exposed buffer, as its NIC knows it (for templated puts)
     * @throws IllegalArgumentException if the rank is not a rank of the job
     */
    public long remoteAddress(int rank) {
        return addresses[checkRank(rank)];
    }

    /**
     * @param rank a rank
     * @return the key of that rank's exposed buffer (for templated puts)
     * @throws IllegalArgumentException if the rank is not a rank of the job
     */
    public long rkey(int rank) {
        return rkeys[checkRank(rank)];
    }

    /**
     * A rank's exposed buffer for direct loads and stores from this process, where the NIC maps that rank's memory
     * here (the software NIC over shared memory does; LibMP has no such call, OpenSHMEM's {@code shmem_ptr} needs
     * it). Accesses through it bypass the queue pairs, so they are ordered with puts and gets only by the ranks' own
     * synchronisation (a barrier, a flag read with acquire semantics). Valid until the window is destroyed.
     *
     * @param rank a rank
     * @return this rank's own buffer for its own rank; the peer's whole buffer ({@link #size(int)} bytes) mapped
     *         here; or null when the NIC cannot map it (another transport, device memory, a failed connection)
     * @throws IllegalArgumentException if the rank is not a rank of the job
     * @throws IllegalStateException    if the window was destroyed
     */
    public MemorySegment peerMemory(int rank) {
        checkRank(rank);
        if (destroyed) {
            throw new IllegalStateException("the window was destroyed");
        }
        if (rank == owner.rank()) {
            return buffer;
        }
        return owner.peerLink(rank).qp.peerMemory(rkeys[rank], addresses[rank], sizes[rank]);
    }

    private int checkRank(int rank) {
        if (rank < 0 || rank >= sizes.length) {
            throw new IllegalArgumentException("rank " + rank + " is not a rank of this job: ranks are 0.." + (sizes.length - 1));
        }
        return rank;
    }

    /** @return whether the window was destroyed */
    public boolean isDestroyed() {
        return destroyed;
    }

    /** Checks that {@code bytes} at {@code displacement} fit in {@code rank}'s buffer. */
    void checkRange(int rank, long displacement, long bytes) {
        if (destroyed) {
            throw new IllegalStateException("the window was destroyed");
        }
        if (displacement < 0 || displacement > sizes[rank] - bytes) {
            throw new IllegalArgumentException("displacement " + displacement + " + " + bytes
                    + " bytes is past the window of rank " + rank + " (" + sizes[rank] + " bytes)");
        }
    }
}
