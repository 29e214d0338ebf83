package dev.gdasync.libmp.coll.reduce;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.CollRequest;
import dev.gdasync.libmp.coll.Communicator;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * The built-in reducing collectives of one communicator (NCCL's and MPI's allreduce, reduce-scatter, reduce,
 * allgather, broadcast, alltoall), blocking, on registered host buffers with element counts.
 *
 * <p>Algorithms: up to {@link #SMALL_BYTES} (or with fewer elements than ranks) recursive doubling, with the ranks
 * past the largest power of two folded into a partner first and served last; above it a ring (reduce-scatter then
 * allgather of the reduced blocks). Every block is reduced along one fixed path, and each pairwise combine puts the
 * lower rank's operand first, so floating-point results are bit-identical on every rank.
 *
 * <p>In place follows NCCL: allreduce and reduce with {@code recv == send}; reduce-scatter with {@code recv} the
 * rank's block of {@code send} ({@code send + rank · recvCount} elements); allgather with {@code send} the rank's
 * block of {@code recv}. Any other overlap is refused. Every check happens before anything is written.
 *
 * <p>Keeps one registered scratch buffer that grows to the largest message; {@link #close} frees it. Driven by the
 * communicator's thread; one collective at a time.
 */
public final class ReducingCollectives implements AutoCloseable {
    /** Messages up to this many bytes use recursive doubling, larger ones the ring. */
    public static final long SMALL_BYTES = 64 * 1024;

    private final Communicator comm;
    private final Mp mp;
    private MemorySegment scratch;
    private MpRegistration scratchReg;
    private boolean closed;

    private ReducingCollectives(Communicator comm) {
        this.comm = comm;
        this.mp = comm.collectives().mp();
    }

    /**
     * @param comm the communicator to run on
     * @return its reducing collectives
     */
    public static ReducingCollectives of(Communicator comm) {
        Objects.requireNonNull(comm, "comm must not be null");
        return new ReducingCollectives(comm);
    }

    /** @return the communicator */
    public Communicator communicator() {
        return comm;
    }

    // ---- allreduce ----

    /**
     * Every rank's {@code recv} gets the element-wise reduction of all ranks' {@code send}.
     *
     * @param send    count elements (or {@code recv} itself: in place)
     * @param sendReg a registration containing {@code send}
     * @param recv    count elements or more
     * @param recvReg a registration containing {@code recv}
     * @param count   elements, &gt;= 0
     * @param type    the element type
     * @param op      the operator
     */
    public void allreduce(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                          long count, DataType type, ReduceOp op) {
        long bytes = checkReduce("allreduce", send, sendReg, recv, recvReg, count, type, op, count, count);
        CollBuffers.requireSameOrDisjoint(send, recv, bytes);
        MemorySegment in = scratch(bytes).asSlice(0, bytes);
        if (send.address() != recv.address()) {
            MemorySegment.copy(send, 0, recv, 0, bytes);
        }
        allreduceWith(recv.asSlice(0, bytes), recvReg, in, count, type, op);
    }

    /**
     * Rank {@code root}'s {@code recv} gets the element-wise reduction of all ranks' {@code send}; the other ranks'
     * {@code recv} is not written (it may be null there). A binomial tree on the ranks as numbered (not rotated to
     * the root): at step k rank r with lowest set bit 2^k sends its partial result to r − 2^k, which combines it
     * after its own ({@code acc ∘ in}, the lower ranks' operand first); rank 0 ends with the result and, if it is not
     * the root, sends it to the root in one more step. The order of the combines depends only on the rank count, so
     * the result has the same bits whichever rank is the root (and the stream form's tree program combines in the
     * same order).
     *
     * @param send    count elements (or, on the root, {@code recv} itself: in place)
     * @param sendReg a registration containing {@code send}
     * @param recv    on the root, count elements or more
     * @param recvReg a registration containing {@code recv}
     * @param count   elements, &gt;= 0
     * @param type    the element type
     * @param op      the operator
     * @param root    the rank that gets the result
     */
    public void reduce(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                       long count, DataType type, ReduceOp op, int root) {
        int n = comm.size();
        int me = comm.rank();
        if (root < 0 || root >= n) {
            throw new IllegalArgumentException("root " + root + " is outside " + comm + ": ranks are 0.." + (n - 1));
        }
        long bytes = me == root
                ? checkReduce("reduce", send, sendReg, recv, recvReg, count, type, op, count, count)
                : checkReduce("reduce", send, sendReg, send, sendReg, count, type, op, count, count);
        if (me == root) {
            CollBuffers.requireSameOrDisjoint(send, recv, bytes);
        }
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

    /** Allreduce of {@code acc} in place; {@code in} (as large as acc, in the scratch) takes the receives. */
    private void allreduceWith(MemorySegment acc, MpRegistration reg, MemorySegment in, long count, DataType type,
                               ReduceOp op) {
        int n = comm.size();
        if (n == 1) {
            return;
        }
        if (acc.byteSize() <= SMALL_BYTES || count < n) {
            recursiveDoubling(acc, reg, in, count, type, op);
        } else {
            Blocks blocks = new Blocks(count, n, type.bytes());
            ringReduceScatter(acc, reg, in, blocks, type, op, 0);
            ringAllgather(acc, reg, blocks, 1);
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
     * One step: posts the exchange and tests it until it finishes, spinning briefly, then yielding, then parking for
     * 20 µs at a time, so that ranks and NIC agents sharing few cores get them; at most the Mp's wait timeout.
     */
    private void exchange(MemorySegment send, MpRegistration sendReg, int dest, MemorySegment recv,
                          MpRegistration recvReg, int source) {
        CollRequest r = comm.isendrecv(send, sendReg, dest, recv, recvReg, source);
        long timeout = mp.config().waitTimeout().toNanos();
        long start = System.nanoTime();
        int idle = 0;
        while (!comm.test(r)) {
            if (System.nanoTime() - start > timeout) {
                // The communicator's own wait reports the timeout with its message (the request stays active).
                comm.wait(r);
                return;
            }
            if (++idle < 64) {
                Thread.onSpinWait();
            } else if (idle < 256) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
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

    // ---- reduce-scatter ----

    /**
     * Rank r's {@code recv} gets block r (recvCount elements) of the element-wise reduction of all ranks'
     * {@code send} (size · recvCount elements).
     *
     * @param send      size · recvCount elements
     * @param sendReg   a registration containing {@code send}
     * @param recv      recvCount elements or more; in place: the slice of {@code send} at rank · recvCount
     * @param recvReg   a registration containing {@code recv}
     * @param recvCount elements per rank, &gt;= 0
     * @param type      the element type
     * @param op        the operator
     */
    public void reduceScatter(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                              long recvCount, DataType type, ReduceOp op) {
        int n = comm.size();
        long total = Math.multiplyExact(recvCount, (long) n);
        long block = checkReduce("reduceScatter", send, sendReg, recv, recvReg, recvCount, type, op, total, recvCount);
        long bytes = total * type.bytes();
        CollBuffers.requireInPlaceAt(send, recv, block, (long) comm.rank() * block, "send + rank · recvCount");
        // The whole vector is reduced in scratch (the caller's send is not written), then our block copied out.
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

    // ---- allgather, broadcast, alltoall ----

    /**
     * Rank r's {@code send} (sendCount elements) lands in block r of every rank's {@code recv} (ring).
     *
     * @param send      sendCount elements; in place: the slice of {@code recv} at rank · sendCount
     * @param sendReg   a registration containing {@code send}
     * @param recv      size · sendCount elements or more
     * @param recvReg   a registration containing {@code recv}
     * @param sendCount elements per rank, &gt;= 0
     * @param type      the element type
     */
    public void allgather(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                          long sendCount, DataType type) {
        int n = comm.size();
        long total = Math.multiplyExact(sendCount, (long) n);
        long block = checkReduce("allgather", send, sendReg, recv, recvReg, sendCount, type, ReduceOp.SUM, sendCount,
                total);
        CollBuffers.requireInPlaceAt(recv, send, block, (long) comm.rank() * block, "recv + rank · sendCount");
        MemorySegment out = recv.asSlice(0, total * type.bytes());
        MemorySegment mine = out.asSlice((long) comm.rank() * block, block);
        if (mine.address() != send.address()) {
            MemorySegment.copy(send, 0, mine, 0, block);
        }
        if (n > 1) {
            ringAllgather(out, recvReg, new Blocks(total, n, type.bytes(), sendCount), 0);
        }
    }

    /**
     * Rank {@code root}'s {@code buf} (count elements) lands in every rank's {@code buf} (binomial tree).
     *
     * @param buf   count elements or more
     * @param reg   a registration containing {@code buf}
     * @param count elements, &gt;= 0
     * @param type  the element type
     * @param root  the sending rank
     */
    public void broadcast(MemorySegment buf, MpRegistration reg, long count, DataType type, int root) {
        long bytes = checkReduce("broadcast", buf, reg, buf, reg, count, type, ReduceOp.SUM, count, count);
        comm.bcast(buf.asSlice(0, bytes), reg, root);
    }

    /**
     * Block j (count elements) of {@code send} goes to rank j; block i of {@code recv} comes from rank i.
     *
     * @param send    size · count elements
     * @param sendReg a registration containing {@code send}
     * @param recv    size · count elements; must not overlap {@code send}
     * @param recvReg a registration containing {@code recv}
     * @param count   elements per pair of ranks, &gt;= 0
     * @param type    the element type
     */
    public void alltoall(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                         long count, DataType type) {
        long total = Math.multiplyExact(count, (long) comm.size());
        checkReduce("alltoall", send, sendReg, recv, recvReg, count, type, ReduceOp.SUM, total, total);
        comm.alltoall(send, sendReg, recv, recvReg, count * type.bytes());
    }

    /** Frees the scratch buffer. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            freeScratch();
        }
    }

    // ---- internals ----

    /** Checks everything a call needs and returns the bytes of {@code count} elements. */
    private long checkReduce(String what, MemorySegment send, MpRegistration sendReg, MemorySegment recv,
                             MpRegistration recvReg, long count, DataType type, ReduceOp op, long sendElems,
                             long recvElems) {
        if (closed) {
            throw new IllegalStateException("these reducing collectives of " + comm + " are closed");
        }
        return CollBuffers.requireCall(what, send, sendReg, recv, recvReg, count, type, op, sendElems, recvElems);
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
