package dev.gdasync.gdsync.nic;

import java.util.Objects;

/**
 * Up to {@link #MAX_SGE} buffers, each an address, a length and the lkey of the memory region that
 * holds it (verbs' {@code ibv_sge} array). Mutable and reusable.
 */
public final class ScatterGatherList {
    /** The most entries a work request may carry. */
    public static final int MAX_SGE = 8;

    private final long[] address = new long[MAX_SGE];
    private final int[] length = new int[MAX_SGE];
    private final long[] lkey = new long[MAX_SGE];
    private int count;

    /** Empties the list. */
    public void clear() {
        count = 0;
    }

    /**
     * Appends a buffer.
     *
     * @param address the buffer's address
     * @param length  its length in bytes, {@code >= 0}
     * @param lkey    the lkey of its memory region
     * @throws IllegalArgumentException if the length is negative
     * @throws IllegalStateException    if the list already has {@link #MAX_SGE} entries
     */
    public void add(long address, int length, long lkey) {
        if (length < 0) {
            throw new IllegalArgumentException("buffer length must be >= 0, got " + length);
        }
        if (count == MAX_SGE) {
            throw new IllegalStateException("a work request carries at most " + MAX_SGE + " buffers");
        }
        this.address[count] = address;
        this.length[count] = length;
        this.lkey[count] = lkey;
        count++;
    }

    /**
     * Appends a buffer inside a memory region. Whether the buffer lies inside the region, and the region is
     * still registered, is the NIC's check when the request is posted, as for any lkey.
     *
     * @param mr     the memory region
     * @param offset the buffer's offset in the region
     * @param length its length in bytes, {@code >= 0}
     * @throws NullPointerException     if the memory region is null
     * @throws IllegalArgumentException if the length is negative
     * @throws IllegalStateException    if the list already has {@link #MAX_SGE} entries
     */
    public void add(MemoryRegion mr, long offset, int length) {
        Objects.requireNonNull(mr, "mr must not be null");
        add(mr.address() + offset, length, mr.lkey());
    }

    /** @return the number of entries */
    public int count() {
        return count;
    }

    /**
     * @param i entry index
     * @return the entry's address
     */
    public long address(int i) {
        check(i);
        return address[i];
    }

    /**
     * @param i entry index
     * @return the entry's length
     */
    public int length(int i) {
        check(i);
        return length[i];
    }

    /**
     * @param i entry index
     * @return the entry's lkey
     */
    public long lkey(int i) {
        check(i);
        return lkey[i];
    }

    /**
     * @return the sum of the lengths
     * @throws IllegalArgumentException if it exceeds {@link Integer#MAX_VALUE}
     */
    public int totalLength() {
        long total = 0;
        for (int i = 0; i < count; i++) {
            total += length[i];
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("total length " + total + " exceeds " + Integer.MAX_VALUE + " bytes");
        }
        return (int) total;
    }

    private void check(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("entry " + i + " of a list with " + count);
        }
    }
}
