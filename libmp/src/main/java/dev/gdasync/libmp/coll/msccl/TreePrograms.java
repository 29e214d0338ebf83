package dev.gdasync.libmp.coll.msccl;

/**
 * The rooted built-ins of the stream and KI interpreters, written as MSCCL-IR: a binomial-tree reduce and a
 * binomial-tree broadcast, one chunk, for any rank count and root. They have the buffer shape of an allreduce (one
 * chunk in, one chunk out), which the parser and validator check as for a file; what makes them a reduce or a
 * broadcast is their steps.
 *
 * <p>Reduce: the tree of {@code ReducingCollectives.reduce}, on the ranks as numbered: rank r receives the partial
 * results of its children r + 2^k (2^k below r's lowest set bit; every higher rank for rank 0) into scratch chunks,
 * each in a thread block of its own, and its local block folds them into its own value in that order
 * ({@code acc ∘ child}, lower ranks first) and sends the result to its parent r − lowbit(r); rank 0 copies the
 * result to its output, or sends it to the root, which receives it into its output. So the result has the same bits
 * as the blocking built-in's, whatever the root. Broadcast: the binomial tree rooted at the root (ranks rotated so the
 * root is 0): a block receives from the parent, and a block per child forwards once the receive is done.
 */
final class TreePrograms {
    private TreePrograms() {
    }

    /**
     * @param n    ranks
     * @param root the rank that gets the result
     * @return the validated reduce program (out of place; an in-place call passes its one buffer as both)
     */
    static MscclProgram reduce(int n, int root) {
        StringBuilder x = header("builtin_tree_reduce_root" + root, n, false);
        for (int r = 0; r < n; r++) {
            int low = r == 0 ? Integer.highestOneBit(Math.max(1, n - 1)) << 1 : Integer.lowestOneBit(r);
            int children = 0;
            for (int m = 1; m < low && r + m < n; m <<= 1) {
                children++;
            }
            x.append("<gpu id=\"").append(r).append("\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"")
                    .append(children == 0 ? 0 : 1 + children).append("\">\n");
            int tb = 0;
            for (int m = 1; m < low && r + m < n; m <<= 1) {
                x.append("<tb id=\"").append(tb).append("\" send=\"-1\" recv=\"").append(r + m)
                        .append("\" chan=\"0\">\n");
                AllPairsPrograms.step(x, 0, "r", "s", 1 + tb, "s", 1 + tb, -1, -1, true);
                x.append("</tb>\n");
                tb++;
            }
            int send = r > 0 ? r - Integer.lowestOneBit(r) : root != 0 ? root : -1;
            int recv = r == root && root != 0 ? 0 : -1;
            x.append("<tb id=\"").append(tb).append("\" send=\"").append(send).append("\" recv=\"").append(recv)
                    .append("\" chan=\"0\">\n");
            int s = 0;
            String acc = children == 0 ? "i" : "s";
            if (children > 0) {
                AllPairsPrograms.step(x, s++, "cpy", "i", 0, "s", 0, -1, -1, false);
                for (int c = 0; c < children; c++) {
                    AllPairsPrograms.step(x, s++, "nop", "s", 0, "s", 0, c, 0, false);
                    AllPairsPrograms.step(x, s++, "re", "s", 1 + c, "s", 0, -1, -1, false);
                }
            }
            if (send >= 0) {
                AllPairsPrograms.step(x, s++, "s", acc, 0, acc, 0, -1, -1, false);
            } else {
                AllPairsPrograms.step(x, s++, "cpy", acc, 0, "o", 0, -1, -1, false);
            }
            if (recv >= 0) {
                AllPairsPrograms.step(x, s, "r", "o", 0, "o", 0, -1, -1, false);
            }
            x.append("</tb>\n</gpu>\n");
        }
        return AllPairsPrograms.parse(x.append("</algo>\n"), "built-in tree reduce to rank " + root);
    }

    /**
     * @param n    ranks
     * @param root the rank whose buffer is sent
     * @return the validated broadcast program (in place: one buffer)
     */
    static MscclProgram broadcast(int n, int root) {
        StringBuilder x = header("builtin_tree_broadcast_root" + root, n, true);
        for (int r = 0; r < n; r++) {
            int v = Math.floorMod(r - root, n);
            int low = v == 0 ? Integer.highestOneBit(Math.max(1, n - 1)) << 1 : Integer.lowestOneBit(v);
            x.append("<gpu id=\"").append(r).append("\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\">\n");
            int tb = 0;
            if (v != 0) {
                int parent = (v - Integer.lowestOneBit(v) + root) % n;
                x.append("<tb id=\"0\" send=\"-1\" recv=\"").append(parent).append("\" chan=\"0\">\n");
                AllPairsPrograms.step(x, 0, "r", "o", 0, "o", 0, -1, -1, true);
                x.append("</tb>\n");
                tb++;
            }
            for (int m = 1; m < low && v + m < n; m <<= 1) {
                x.append("<tb id=\"").append(tb++).append("\" send=\"").append((v + m + root) % n)
                        .append("\" recv=\"-1\" chan=\"0\">\n");
                if (v != 0) {
                    AllPairsPrograms.step(x, 0, "nop", "o", 0, "o", 0, 0, 0, false);
                    AllPairsPrograms.step(x, 1, "s", "o", 0, "o", 0, -1, -1, false);
                } else {
                    AllPairsPrograms.step(x, 0, "s", "i", 0, "i", 0, -1, -1, false);
                }
                x.append("</tb>\n");
            }
            if (tb == 0) {
                // One rank: the program needs a block; it has nothing to do.
                x.append("<tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\">\n");
                AllPairsPrograms.step(x, 0, "nop", "o", 0, "o", 0, -1, -1, false);
                x.append("</tb>\n");
            }
            x.append("</gpu>\n");
        }
        return AllPairsPrograms.parse(x.append("</algo>\n"), "built-in tree broadcast from rank " + root);
    }

    private static StringBuilder header(String name, int n, boolean inPlace) {
        return new StringBuilder("<algo name=\"").append(name).append("\" proto=\"Simple\" nchannels=\"1\" ")
                .append("nchunksperloop=\"1\" ngpus=\"").append(n).append("\" coll=\"allreduce\" inplace=\"")
                .append(inPlace ? 1 : 0).append("\">\n");
    }
}
