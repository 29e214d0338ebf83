package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * Reduces one vector from every member in the order of the built-in reduce's binomial tree on the ranks as
 * numbered: at step 2^k, rank r (a multiple of 2^(k+1)) combines rank r + 2^k's partial result after its own, the
 * lower rank's operand first. The result therefore has the same bits wherever it is computed, whichever rank is the
 * root, and as the message path's reduce and the stream and KI forms' tree programs.
 *
 * <p>Works chunk by chunk: the partial results of the tree's inner nodes live in the channel's scratch (rank 0's in
 * the output itself, unless the output is another member's input), the leaves are read where they are. The output may
 * be one of the inputs (in place): each chunk of it is written only after every input's chunk was read.
 */
final class TreeFold {
    private TreeFold() {
    }

    /**
     * @param in        one vector per member, in rank order, each at least {@code elems} elements
     * @param out       where the result goes, at least {@code elems} elements
     * @param elems     elements
     * @param elemBytes bytes of one element
     * @param combiner  the operator
     * @param scratch   at least ceil(n/2) chunks of {@link ShmChannel#FOLD_CHUNK_BYTES}
     */
    static void fold(MemorySegment[] in, MemorySegment out, long elems, int elemBytes, Combiner combiner,
                     MemorySegment scratch) {
        int n = in.length;
        if (n == 1) {
            MemorySegment.copy(in[0], 0, out, 0, elems * elemBytes);
            return;
        }
        // The root's partial result is built in the output itself unless the output is another member's input.
        boolean rootInOut = true;
        for (int r = 1; r < n; r++) {
            rootInOut &= !overlaps(out, in[r], elems * elemBytes);
        }
        long chunk = ShmChannel.FOLD_CHUNK_BYTES / elemBytes;
        for (long off = 0; off < elems; off += chunk) {
            long c = Math.min(chunk, elems - off);
            long at = off * elemBytes;
            long bytes = c * elemBytes;
            MemorySegment root = rootInOut ? out.asSlice(at, bytes) : scratch.asSlice(0, bytes);
            if (root.address() != in[0].address() + at) {
                MemorySegment.copy(in[0], at, root, 0, bytes);
            }
            for (int r = 2; r + 1 < n; r += 2) {
                MemorySegment.copy(in[r], at, scratch, node(r), bytes);
            }
            for (int mask = 1; mask < n; mask <<= 1) {
                for (int r = 0; r + mask < n; r += 2 * mask) {
                    int child = r + mask;
                    MemorySegment right = inner(child, n) ? scratch.asSlice(node(child), bytes) : in[child].asSlice(at, bytes);
                    combiner.combine(r == 0 ? root : scratch.asSlice(node(r), bytes), right, c);
                }
            }
            if (!rootInOut) {
                MemorySegment.copy(scratch, 0, out, at, bytes);
            }
        }
    }

    private static boolean overlaps(MemorySegment a, MemorySegment b, long bytes) {
        long x = a.address();
        long y = b.address();
        return x < y + bytes && y < x + bytes;
    }

    /** Whether rank r of n has children in the tree (it then keeps a partial result in the scratch). */
    private static boolean inner(int r, int n) {
        return (r & 1) == 0 && r + 1 < n;
    }

    private static long node(int r) {
        return (long) (r >> 1) * ShmChannel.FOLD_CHUNK_BYTES;
    }
}
