package dev.gdasync.gdsync.nic;

/**
 * A receive queue work request (verbs' {@code ibv_recv_wr}): where the next incoming SEND lands.
 * Mutable and reusable.
 */
public final class RecvWorkRequest {
    private final ScatterGatherList sgl = new ScatterGatherList();
    private long wrId;

    /**
     * Back to no buffers and id 0.
     *
     * @return this
     */
    public RecvWorkRequest reset() {
        sgl.clear();
        wrId = 0;
        return this;
    }

    /**
     * @param wrId the id its completion will carry
     * @return this
     */
    public RecvWorkRequest wrId(long wrId) {
        this.wrId = wrId;
        return this;
    }

    /**
     * Appends a buffer.
     *
     * @param address its address
     * @param length  its length
     * @param lkey    the lkey of its memory region, which must allow LOCAL_WRITE
     * @return this
     * @throws IllegalArgumentException if the length is negative
     * @throws IllegalStateException    if the request already has {@link ScatterGatherList#MAX_SGE} buffers
     */
    public RecvWorkRequest sge(long address, int length, long lkey) {
        sgl.add(address, length, lkey);
        return this;
    }

    /**
     * Appends a buffer inside a memory region.
     *
     * @param mr     the memory region
     * @param offset the buffer's offset in it
     * @param length its length
     * @return this
     * @throws NullPointerException     if the memory region is null
     * @throws IllegalArgumentException if the length is negative (whether the buffer lies inside the region is
     *                                  checked when the request is posted)
     * @throws IllegalStateException    if the request already has {@link ScatterGatherList#MAX_SGE} buffers
     */
    public RecvWorkRequest sge(MemoryRegion mr, long offset, int length) {
        sgl.add(mr, offset, length);
        return this;
    }

    /** @return the work request id */
    public long wrId() {
        return wrId;
    }

    /** @return the buffers */
    public ScatterGatherList sgl() {
        return sgl;
    }
}
