package dev.gdasync.gdsync.nic;

import java.util.Objects;

/**
 * A send queue work request (verbs' {@code ibv_send_wr}). Mutable and reusable: fill it, post or
 * prepare it, then {@link #reset()} it for the next request. Providers copy what they need at post
 * time, so it can be changed as soon as the call returns.
 */
public final class SendWorkRequest {
    private final ScatterGatherList sgl = new ScatterGatherList();
    private Opcode opcode = Opcode.SEND;
    private int flags = SendFlags.SIGNALED;
    private long wrId;
    private long remoteAddress;
    private long rkey;
    private int immediate;
    private long compareAdd;
    private long swap;

    /** Creates a signaled SEND with no buffers. */
    public SendWorkRequest() {
    }

    /**
     * Back to a signaled SEND with no buffers.
     *
     * @return this
     */
    public SendWorkRequest reset() {
        sgl.clear();
        opcode = Opcode.SEND;
        flags = SendFlags.SIGNALED;
        wrId = 0;
        remoteAddress = 0;
        rkey = 0;
        immediate = 0;
        compareAdd = 0;
        swap = 0;
        return this;
    }

    /**
     * @param opcode the operation
     * @return this
     * @throws NullPointerException if the opcode is null
     */
    public SendWorkRequest opcode(Opcode opcode) {
        this.opcode = Objects.requireNonNull(opcode, "opcode must not be null");
        return this;
    }

    /**
     * @param flags {@link SendFlags} bits
     * @return this
     */
    public SendWorkRequest flags(int flags) {
        this.flags = flags;
        return this;
    }

    /**
     * @param wrId the id its completion will carry
     * @return this
     */
    public SendWorkRequest wrId(long wrId) {
        this.wrId = wrId;
        return this;
    }

    /**
     * Appends a local buffer.
     *
     * @param address the buffer's address
     * @param length  its length
     * @param lkey    its memory region's lkey (INLINE buffers too: the payload is read through the registration)
     * @return this
     * @throws IllegalArgumentException if the length is negative
     * @throws IllegalStateException    if the request already has {@link ScatterGatherList#MAX_SGE} buffers
     */
    public SendWorkRequest sge(long address, int length, long lkey) {
        sgl.add(address, length, lkey);
        return this;
    }

    /**
     * Appends a local buffer inside a memory region.
     *
     * @param mr     the memory region
     * @param offset the buffer's offset in the region
     * @param length its length
     * @return this
     * @throws NullPointerException     if the memory region is null
     * @throws IllegalArgumentException if the length is negative (whether the buffer lies inside the region is
     *                                  checked when the request is posted)
     * @throws IllegalStateException    if the request already has {@link ScatterGatherList#MAX_SGE} buffers
     */
    public SendWorkRequest sge(MemoryRegion mr, long offset, int length) {
        sgl.add(mr, offset, length);
        return this;
    }

    /**
     * Sets the remote target of an RDMA or atomic operation.
     *
     * @param remoteAddress the address in the peer's memory region
     * @param rkey          the peer region's rkey
     * @return this
     */
    public SendWorkRequest remote(long remoteAddress, long rkey) {
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        return this;
    }

    /**
     * @param immediate the 32-bit immediate value of a *_WITH_IMM opcode
     * @return this
     */
    public SendWorkRequest immediate(int immediate) {
        this.immediate = immediate;
        return this;
    }

    /**
     * @param compareAdd the compare value of CMP_SWAP or the addend of FETCH_ADD
     * @return this
     */
    public SendWorkRequest compareAdd(long compareAdd) {
        this.compareAdd = compareAdd;
        return this;
    }

    /**
     * @param swap the value CMP_SWAP stores when the compare succeeds
     * @return this
     */
    public SendWorkRequest swap(long swap) {
        this.swap = swap;
        return this;
    }

    /** @return the operation */
    public Opcode opcode() {
        return opcode;
    }

    /** @return the {@link SendFlags} bits */
    public int flags() {
        return flags;
    }

    /** @return whether SIGNALED is set */
    public boolean signaled() {
        return (flags & SendFlags.SIGNALED) != 0;
    }

    /** @return the work request id */
    public long wrId() {
        return wrId;
    }

    /** @return the local buffers */
    public ScatterGatherList sgl() {
        return sgl;
    }

    /** @return the remote address */
    public long remoteAddress() {
        return remoteAddress;
    }

    /** @return the remote key */
    public long rkey() {
        return rkey;
    }

    /** @return the immediate value */
    public int immediate() {
        return immediate;
    }

    /** @return the compare value or addend */
    public long compareAdd() {
        return compareAdd;
    }

    /** @return the swap value */
    public long swap() {
        return swap;
    }

    @Override
    public String toString() {
        return "SendWorkRequest{" + opcode + ", flags=" + SendFlags.describe(flags) + ", wrId=" + wrId
                + ", sge=" + sgl.count() + ", bytes=" + sgl.totalLength()
                + (opcode.isRemoteAccess() ? ", remote=0x" + Long.toHexString(remoteAddress) : "") + "}";
    }
}
