package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * The reducing collectives of a communicator on the message path (members that cannot map one another's memory:
 * several hosts, the ucx transport, or the shared-memory path turned off), built from the communicator's
 * {@code isendrecv} steps. Up to {@link #SMALL_BYTES} bytes (or with fewer elements than ranks) recursive doubling, with
 * the ranks past the largest power of two folded into a partner first and served last; above it a ring
 * (reduce-scatter then allgather of the reduced blocks); reduce is a binomial tree on the ranks as numbered. Every
 * block is reduced along one fixed path, and each pairwise combine puts the lower rank's operand first, so
 * floating-point results are bit-identical on every rank.
 *
 * <p>Keeps one registered scratch buffer that grows to the largest message; {@link #close} frees it. Arguments are
 * checked by the communicator before they get here.
 */
final class PairwiseReductions implements AutoCloseable {
    /** Messages up to this many bytes use recursive doubling, larger ones the ring. */
    static final long SMALL_BYTES = 64 * 1024;

    private final Communicator comm;
    private final Mp mp;
    private MemorySegment scratch;
    private MpRegistration scratchReg;

    PairwiseReductions(Communicator comm) {
        this.comm = comm;
        this.mp = comm.collectives().mp();
    }

    /** Allreduce of {@code recv} (which holds this rank's vector already), in place. */
    void allreduce(MemorySegment acc, MpRegistration reg, long count, DataType type, ReduceOp op) {
        int n = comm.size();
        long bytes = count * type.bytes();
        if (n == 1) {
            return;
        }
        MemorySegment in = scratch(bytes).asSlice(0, bytes);
        if (bytes <= SMALL_BYTES || count < n) {
            recursiveDoubling(acc, reg, in, count, type, op);
        } else {
            Blocks blocks = new Blocks(count, n, type.bytes());
            ringReduceScatter(acc, reg, in, blocks, type, op, 0);
            ringAllgather(acc, reg, blocks, 1);
        }
    }

    /** Reduce to {@code root} along the binomial tree (see {@link Communicator#reduce}). */
    void reduce(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg, long count,
                DataType type, ReduceOp op, int root) {
        int n = comm.size();
        int me = comm.rank();
        long bytes = count * type.bytes();
        boolean hasChildren = me == 0 ? n > 1 : (me & 1) == 0 && me + 1 < n;
        MemorySegment acc;
        MpRegistration accReg;
        if (!hasChildren) {
            acc = send.asSlice(0, bytes);
            accReg = sendReg;
        } else if (root == 0 && me == 0) {
            acc = recv.asSlice(0, bytes);
            accReg = recvReg;
            if (send.address() != recv.address()) {
                MemorySegment.copy(send, 0, acc, 0, bytes);
            }
        } else {
            acc = scratch(2 * bytes).asSlice(0, bytes);
            accReg = scratchReg;
            MemorySegment.copy(send, 0, acc, 0, bytes);
        }
        MemorySegment in = hasChildren ? scratch(2 * bytes).asSlice(bytes, bytes) : null;
        for (int mask = 1; mask < n; mask <<= 1) {
            if ((me & mask) != 0 && (me & (mask - 1)) == 0) {
                exchange(acc, accReg, me - mask, null, null, Communicator.PROC_NULL);
            } else if ((me & (2 * mask - 1)) == 0 && me + mask < n) {
                exchange(null, null, Communicator.PROC_NULL, in, scratchReg, me + mask);
                op.apply(type, acc, in, count);
            } else {
                idleStep();
            }
        }
        if (root != 0) {
            if (me == 0) {
                exchange(acc, accReg, root, null, null, Communicator.PROC_NULL);
            } else if (me == root) {
                exchange(null, null, Communicator.PROC_NULL, recv.asSlice(0, bytes), recvReg, 0);
            } else {
                idleStep();
            }
        } else if (n == 1 && send.address() != recv.address()) {
            MemorySegment.copy(send, 0, recv, 0, bytes);
        }
    }

    /** Reduce-scatter: the whole vector is reduced in scratch (send is not written), then this rank's block copied. */
    void reduceScatter(MemorySegment send, MemorySegment recv, long recvCount, DataType type, ReduceOp op) {
        int n = comm.size();
        long total = recvCount * n;
        long block = recvCount * type.bytes();
        long bytes = total * type.bytes();
        MemorySegment work = scratch(2 * bytes).asSlice(0, bytes);
        MemorySegment in = scratch.asSlice(bytes, bytes);
        MemorySegment.copy(send, 0, work, 0, bytes);
        if (n > 1) {
            if (bytes <= SMALL_BYTES || recvCount == 0) {
                recursiveDoubling(work, scratchReg, in, total, type, op);
            } else {
                ringReduceScatter(work, scratchReg, in, new Blocks(total, n, type.bytes()), type, op, -1);
            }
        }
        MemorySegment.copy(work, (long) comm.rank() * block, recv, 0, block);
    }

    /** Ring allgather of {@code out} in place: this rank's block is there already. */
    void allgather(MemorySegment out, MpRegistration reg, long sendCount, DataType type) {
        int n = comm.size();
        if (n > 1) {
            ringAllgather(out, reg, new Blocks(sendCount * n, n, type.bytes(), sendCount), 0);
        }
    }

    /**
     * Recursive doubling on the largest power of two p ≤ n: ranks 2i and 2i+1 (i &lt; n − p) first fold into the odd
     * one, which takes part; the even one gets the result at the end. Every rank posts 2 + log2 p exchanges (empty
     * ones where it has nothing to do) so the communicator's collective numbers stay in step.
     */
    private void recursiveDoubling(MemorySegment acc, MpRegistration reg, MemorySegment in, long count,
                                   DataType type, ReduceOp op) {
        int n = comm.size();
        int me = comm.rank();
        int p = Integer.highestOneBit(n);
        int rem = n - p;
        int newRank;
        if (me < 2 * rem) {
            if (me % 2 == 0) {
                exchange(acc, reg, me + 1, null, null, Communicator.PROC_NULL);
                newRank = -1;
            } else {
                exchange(null, null, Communicator.PROC_NULL, in, scratchReg, me - 1);
                combineLowerFirst(acc, in, true, count, type, op);
                newRank = me / 2;
            }
        } else {
            idleStep();
            newRank = me - rem;
        }
        for (int mask = 1; mask < p; mask <<= 1) {
            if (newRank < 0) {
                idleStep();
                continue;
            }
            int partnerNew = newRank ^ mask;
            int partner = partnerNew < rem ? partnerNew * 2 + 1 : partnerNew + rem;
            exchange(acc, reg, partner, in, scratchReg, partner);
            combineLowerFirst(acc, in, partner < me, count, type, op);
        }
        if (me < 2 * rem) {
            if (me % 2 == 0) {
                exchange(null, null, Communicator.PROC_NULL, acc, reg, me + 1);
            } else {
                exchange(acc, reg, me - 1, null, null, Communicator.PROC_NULL);
            }
        } else {
            idleStep();
        }
    }

    /**
     * One step: posts the exchange and tests it until it finishes, idling as every wait of the library does (spin,
     * then yield, parking only after a long wait), at most the Mp's wait timeout.
     */
    private void exchange(MemorySegment send, MpRegistration sendReg, int dest, MemorySegment recv,
                          MpRegistration recvReg, int source) {
        comm.wait(comm.isendrecv(send, sendReg, dest, recv, recvReg, source));
    }

    /** A step with nothing to exchange: it still takes a collective number, as the other ranks' steps do. */
    private void idleStep() {
        exchange(null, null, Communicator.PROC_NULL, null, null, Communicator.PROC_NULL);
    }

    /** acc = in ∘ acc if {@code inIsLower}, else acc ∘ in: the lower rank's operand always comes first. */
    private static void combineLowerFirst(MemorySegment acc, MemorySegment in, boolean inIsLower, long count,
                                          DataType type, ReduceOp op) {
        if (inIsLower) {
            op.apply(type, in, acc, count);
            MemorySegment.copy(in, 0, acc, 0, count * type.bytes());
        } else {
            op.apply(type, acc, in, count);
        }
    }

    /**
     * Ring reduce-scatter over {@code acc} in place: at step s rank r sends block r − s + shift to its right and
     * reduces block r − s − 1 + shift from its left into its own; at the end rank r holds block r + 1 + shift fully
     * reduced (shift 0 for allreduce, −1 to end on block r). Each block is reduced along one path only.
     */
    private void ringReduceScatter(MemorySegment acc, MpRegistration reg, MemorySegment in, Blocks blocks,
                                   DataType type, ReduceOp op, int shift) {
        int n = comm.size();
        int me = comm.rank();
        int right = (me + 1) % n;
        int left = (me + n - 1) % n;
        for (int s = 0; s < n - 1; s++) {
            int sendBlock = Math.floorMod(me - s + shift, n);
            int recvBlock = Math.floorMod(me - s - 1 + shift, n);
            MemorySegment into = in.asSlice(0, blocks.bytes(recvBlock));
            exchange(blocks.of(acc, sendBlock), reg, right, into, scratchReg, left);
            op.apply(type, blocks.of(acc, recvBlock), into, blocks.count(recvBlock));
        }
    }

    /** Ring allgather in place: rank r starts with block r + shift and forwards what it got at each step. */
    private void ringAllgather(MemorySegment buf, MpRegistration reg, Blocks blocks, int shift) {
        int n = comm.size();
        int me = comm.rank();
        int right = (me + 1) % n;
        int left = (me + n - 1) % n;
        for (int s = 0; s < n - 1; s++) {
            int sendBlock = Math.floorMod(me + shift - s, n);
            int recvBlock = Math.floorMod(me + shift - s - 1, n);
            exchange(blocks.of(buf, sendBlock), reg, right, blocks.of(buf, recvBlock), reg, left);
        }
    }

    private MemorySegment scratch(long bytes) {
        if (scratch == null || scratch.byteSize() < bytes) {
            freeScratch();
            long size = Math.max(4096, Long.highestOneBit(Math.max(1, bytes - 1)) << 1);
            scratch = mp.allocate(size);
            scratchReg = mp.register(scratch);
        }
        return scratch;
    }

    private void freeScratch() {
        if (scratch != null) {
            mp.deregister(scratchReg);
            mp.free(scratch);
            scratch = null;
            scratchReg = null;
        }
    }

    /** Frees the scratch buffer. */
    @Override
    public void close() {
        freeScratch();
    }

    /** A vector of {@code total} elements cut into n blocks: equal ones, or the first {@code total mod n} one longer. */
    private static final class Blocks {
        private final long[] start;
        private final int elem;

        Blocks(long total, int n, int elem) {
            this.elem = elem;
            start = new long[n + 1];
            long base = total / n;
            long extra = total % n;
            for (int i = 0; i < n; i++) {
                start[i + 1] = start[i] + base + (i < extra ? 1 : 0);
            }
        }

        Blocks(long total, int n, int elem, long each) {
            this.elem = elem;
            start = new long[n + 1];
            for (int i = 0; i < n; i++) {
                start[i + 1] = start[i] + each;
            }
        }

        long count(int b) {
            return start[b + 1] - start[b];
        }

        long bytes(int b) {
            return count(b) * elem;
        }

        MemorySegment of(MemorySegment buf, int b) {
            return buf.asSlice(start[b] * elem, bytes(b));
        }
    }
}
