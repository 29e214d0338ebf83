package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.Mp;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The agreement before a collective call changes the symmetric heap ({@code malloc}, {@code calloc}, {@code free}):
 * every PE publishes its call into every PE's agreement area and all compare after a barrier, so PEs that disagree
 * all get the same {@link IllegalArgumentException} and the heap stays as it was.
 */
final class HeapAgreement {
    /** One PE's record in an agreement area: call number, call kind, two arguments. */
    static final int RECORD = 32;
    static final int KIND_MALLOC = 1;
    static final int KIND_FREE = 2;
    static final int KIND_CALLOC = 3;

    private final Mp mp;
    private final MemorySegment heapMemory;
    private final RmaQueue queue;
    private final MemorySegment record = MemorySegment.ofArray(new long[RECORD / 8]);
    private long collectives;

    /**
     * @param mp         the PE's Mp (its barrier, rank and size)
     * @param heapMemory the heap, whose first {@code 2 * size * RECORD} bytes are the two agreement areas
     * @param queue      the default context's queue, which carries the records to the other PEs
     */
    HeapAgreement(Mp mp, MemorySegment heapMemory, RmaQueue queue) {
        this.mp = mp;
        this.heapMemory = heapMemory;
        this.queue = queue;
    }

    /**
     * Every PE publishes (call number, kind, a, b) into every PE's agreement area, then all compare after a barrier.
     * Two areas alternate: a PE may write call k+1's records while a slower one still reads call k's, never k+2's
     * before every PE passed call k+1's barrier.
     */
    void agree(int kind, String what, long a, long b) {
        long call = ++collectives;
        int me = mp.rank();
        int n = mp.size();
        long area = (call & 1) * n * RECORD;
        record.set(JAVA_LONG, 0, call);
        record.set(JAVA_LONG, 8, kind);
        record.set(JAVA_LONG, 16, a);
        record.set(JAVA_LONG, 24, b);
        long slot = area + (long) me * RECORD;
        MemorySegment.copy(record, 0, heapMemory, slot, RECORD);
        for (int p = 0; p < n; p++) {
            if (p != me) {
                queue.put(record, p, slot);
            }
        }
        queue.quiet();
        mp.barrier();
        for (int p = 0; p < n; p++) {
            long at = area + (long) p * RECORD;
            long pCall = heapMemory.get(JAVA_LONG, at);
            long pKind = heapMemory.get(JAVA_LONG, at + 8);
            long pa = heapMemory.get(JAVA_LONG, at + 16);
            long pb = heapMemory.get(JAVA_LONG, at + 24);
            if (pCall != call || pKind != kind || pa != a || pb != b) {
                throw new IllegalArgumentException("collective " + what + " #" + call + ": PE " + p + " called "
                        + kindName(pKind) + " #" + pCall + " with " + argument(pKind, pa, pb) + ", PE " + me + " called "
                        + what + " with " + argument(kind, a, b) + ": every PE makes the same collective calls with the "
                        + "same arguments; nothing was changed");
            }
        }
    }

    private static String kindName(long kind) {
        return kind == KIND_MALLOC ? "malloc" : kind == KIND_CALLOC ? "calloc" : kind == KIND_FREE ? "free"
                : "call kind " + kind;
    }

    private static String argument(long kind, long a, long b) {
        if (kind == KIND_FREE) {
            return a < 0 ? "no live block" : "the block at heap offset " + a;
        }
        if (kind == KIND_CALLOC) {
            return a + " elements of " + b + " bytes";
        }
        return a < 1 ? "an invalid length (" + a + ")" : a + " bytes";
    }
}
