package dev.gdasync.gdsync.swnic.ucx;

import java.lang.foreign.MemorySegment;

/**
 * The pieces of one UCX transfer's local memory: up to eight (segment, offset, length) buffers in order, as a
 * gather or scatter list. A message's payload is contiguous; these move it in and out of the list.
 */
final class UcxPieces {
    static final int MAX = 8;

    final MemorySegment[] seg = new MemorySegment[MAX];
    final long[] off = new long[MAX];
    final int[] len = new int[MAX];
    int count;
    long capacity;

    void clear() {
        count = 0;
        capacity = 0;
    }

    void add(MemorySegment s, long o, int l) {
        seg[count] = s;
        off[count] = o;
        len[count] = l;
        count++;
        capacity += l;
    }

    /** @return a copy of this list, for a transfer that ends after this one is reused */
    UcxPieces copy() {
        UcxPieces c = new UcxPieces();
        for (int i = 0; i < count; i++) {
            c.add(seg[i], off[i], len[i]);
        }
        return c;
    }

    /** Copies {@code src} into the pieces in order, as far as both reach. */
    void scatterFrom(MemorySegment src) {
        long at = 0;
        for (int i = 0; i < count && at < src.byteSize(); i++) {
            int n = (int) Math.min(len[i], src.byteSize() - at);
            MemorySegment.copy(src, at, seg[i], off[i], n);
            at += n;
        }
    }

    /** Copies the pieces in order into {@code dst}, which holds at least {@link #capacity} bytes. */
    void gatherInto(MemorySegment dst) {
        long at = 0;
        for (int i = 0; i < count; i++) {
            MemorySegment.copy(seg[i], off[i], dst, at, len[i]);
            at += len[i];
        }
    }
}
