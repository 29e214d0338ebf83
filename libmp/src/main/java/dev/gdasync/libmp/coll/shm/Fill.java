package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Fills one member's receive buffer for one collective of the copying kinds (bcast, allgather, alltoall,
 * alltoallv) from what the members published: their inline bytes, slots, or buffers mapped through their keys.
 * Everything it needs is in the areas, the member's own block included (a member that fills its own buffer copies
 * that block directly, once every member's call agreed; a helper copies it from what the member published), so
 * either the member itself or a helper acting for it (the offload engine's collective proxy) can run it; whoever
 * claimed the fill runs it, then the done word is set. A {@code check} run copies nothing and only says whether a fill would find every
 * source and agree on every size (a helper fills only then, leaving anything doubtful to the member, which reports
 * it).
 */
final class Fill {
    /** Bytes of one alltoallv table entry: send offset, send count, receive displacement, receive count. */
    static final long ENTRY = 32;

    private Fill() {
    }

    /**
     * @param v     the areas and mappings to read through
     * @param r     the member whose buffer is filled
     * @param seq   the collective
     * @param call  the call every member agreed on
     * @param recv  member r's receive buffer (bcast: its buffer), as the filler reaches it
     * @param check copy nothing, only look
     * @param own   fill member r's own block too, from what it published (a helper does; the member copies it itself)
     * @return null when every block was (or would be) written, else why one was not (the others still were)
     */
    static String run(FillView v, int r, long seq, ShmCall call, MemorySegment recv, boolean check, boolean own) {
        int first = own ? 0 : 1;
        int n = v.size();
        long bytes = call.bytes();
        String problem = null;
        switch (call.kind()) {
            case BCAST -> {
                if (r != call.root() && bytes > 0) {
                    problem = copy(v, call.root(), seq, bytes, 0, recv, 0, bytes, check);
                }
            }
            case ALLGATHER -> {
                for (int k = first; k < n && bytes > 0; k++) {
                    int m = (r + k) % n;
                    problem = first(problem, copy(v, m, seq, bytes, 0, recv, m * bytes, bytes, check));
                }
            }
            case ALLTOALL -> {
                for (int k = first; k < n && bytes > 0; k++) {
                    int m = (r + k) % n;
                    problem = first(problem, copy(v, m, seq, n * bytes, r * bytes, recv, m * bytes, bytes, check));
                }
            }
            case ALLTOALLV -> {
                MemorySegment mine = v.area(r).slot(seq);
                for (int k = first; k < n; k++) {
                    int m = (r + k) % n;
                    MemorySegment theirs = v.area(m).slot(seq);
                    long from = theirs.get(ValueLayout.JAVA_LONG, ENTRY * r);
                    long count = theirs.get(ValueLayout.JAVA_LONG, ENTRY * r + 8);
                    long into = mine.get(ValueLayout.JAVA_LONG, ENTRY * m + 16);
                    long expect = mine.get(ValueLayout.JAVA_LONG, ENTRY * m + 24);
                    if (count != expect) {
                        problem = first(problem, "rank " + m + " sends " + count + " bytes to rank " + r + " but rank " + r
                                + " expects " + expect + " from it; the block was not written");
                    } else if (count > 0) {
                        problem = first(problem, v.area(m).pathOf(seq) == ShmArea.PATH_MAPPED
                                ? copy(v, m, seq, from + count, from, recv, into, count, check)
                                : copyFrom(theirs, from, recv, into, count, check));
                    }
                }
            }
            default -> throw new IllegalStateException(call.kind() + " is not filled by copies");
        }
        return problem;
    }

    /** Copies {@code count} bytes at {@code at} of member m's payload ({@code whole} bytes) into {@code recv}. */
    private static String copy(FillView v, int m, long seq, long whole, long at, MemorySegment recv, long into,
                               long count, boolean check) {
        ShmArea a = v.area(m);
        MemorySegment src = switch (a.pathOf(seq)) {
            case ShmArea.PATH_INLINE -> a.inline(seq);
            case ShmArea.PATH_SLOT -> a.slot(seq);
            case ShmArea.PATH_MAPPED -> v.map(m, a.keysOf(seq, false));
            default -> null;
        };
        if (src == null || src.byteSize() < whole) {
            long[] keys = a.keysOf(seq, false);
            return "rank " + m + "'s send buffer (" + keys[2] + " bytes at 0x" + Long.toHexString(keys[0])
                    + ") cannot be mapped here: it is not registered memory of that rank that this rank can reach";
        }
        return copyFrom(src, at, recv, into, count, check);
    }

    private static String copyFrom(MemorySegment src, long at, MemorySegment recv, long into, long count,
                                   boolean check) {
        if (!check) {
            MemorySegment.copy(src, at, recv, into, count);
        }
        return null;
    }

    private static String first(String problem, String next) {
        return problem != null ? problem : next;
    }
}
