package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * Allreduce, reduce and reduce-scatter. Every result element is combined in the order of {@link TreeFold} (the
 * built-in reduce's binomial tree on the ranks as numbered), so floating-point results have the same bits on every
 * member, whichever member computes them.
 * <ul>
 * <li>Up to {@link ShmChannel#SMALL_REDUCE_BYTES}: every member copies its vector into its area (inline or slot);
 * then every member that needs a result folds it from everyone's copies (allreduce: the whole vector; reduce: the
 * root; reduce-scatter: each its own block). One synchronisation.</li>
 * <li>Larger: every member publishes its buffers' keys and the work is shared, each member folding its own block
 * of the vector straight from the others' send buffers (mapped here) into its receive buffer; allreduce then waits
 * for every member's first phase and copies the other blocks out of their receive buffers; reduce is folded by the
 * root alone. Every member then waits until the others finished reading its buffers.</li>
 * </ul>
 * In place as the built-ins allow it: allreduce and reduce with {@code recv == send}, reduce-scatter with
 * {@code recv} this rank's block of {@code send}.
 */
final class ReduceTask extends ShmTask {
    private final MemorySegment send;
    private final long sendKey;
    private final MemorySegment recv;
    private final long recvKey;
    private final int elemBytes;
    private final Combiner combiner;
    /** Elements of the whole vector every member contributes. */
    private final long elems;
    private final boolean small;
    private boolean firstPhaseDone;

    /**
     * @param recv    the result's buffer (null on a reduce's non-root)
     * @param elems   elements of each member's whole vector (reduce-scatter: size × recvCount)
     */
    ReduceTask(ShmChannel ch, ShmCall call, MemorySegment send, long sendKey, MemorySegment recv, long recvKey,
               long elems, int elemBytes, Combiner combiner) {
        super(ch, call);
        this.send = send;
        this.sendKey = sendKey;
        this.recv = recv;
        this.recvKey = recvKey;
        this.elems = elems;
        this.elemBytes = elemBytes;
        this.combiner = combiner;
        long bytes = elems * elemBytes;
        this.small = bytes <= Math.min(ShmChannel.SMALL_REDUCE_BYTES, ch.slotBytes());
    }

    private ShmCall.Kind kind() {
        return call.kind();
    }

    @Override
    int publishPayload() {
        long bytes = elems * elemBytes;
        if (bytes == 0) {
            return ShmArea.PATH_NONE;
        }
        if (small) {
            return publishCopy(send, bytes);
        }
        return publishKeys(send, sendKey, kind() == ShmCall.Kind.ALLREDUCE ? recv : null, recvKey);
    }

    @Override
    boolean work() {
        if (elems == 0) {
            return true;
        }
        return small ? foldSmall() : foldShared();
    }

    private boolean foldSmall() {
        long bytes = elems * elemBytes;
        switch (kind()) {
            case ALLREDUCE -> fold(0, elems, recv, bytes);
            case REDUCE -> {
                if (me == call.root()) {
                    fold(0, elems, recv, bytes);
                }
            }
            default -> {
                long block = elems / n;
                fold(me * block, block, recv, bytes);
            }
        }
        return true;
    }

    private boolean foldShared() {
        long bytes = elems * elemBytes;
        switch (kind()) {
            case REDUCE -> {
                if (me == call.root()) {
                    fold(0, elems, recv, bytes);
                }
                return true;
            }
            case REDUCE_SCATTER -> {
                long block = elems / n;
                fold(me * block, block, recv, bytes);
                return true;
            }
            default -> {
                if (!firstPhaseDone) {
                    fold(start(me), start(me + 1) - start(me), recv.asSlice(start(me) * elemBytes), bytes);
                    firstPhaseDone = true;
                    ch.own.setPhase(seq);
                }
                if (!everyPhaseDone()) {
                    return false;
                }
                for (int k = 1; k < n; k++) {
                    int m = (me + k) % n;
                    MemorySegment theirs = payload(m, bytes, true);
                    long at = start(m) * elemBytes;
                    if (theirs != null) {
                        MemorySegment.copy(theirs, at, recv, at, (start(m + 1) - start(m)) * elemBytes);
                    }
                }
                return true;
            }
        }
    }

    /** The first element of block b of the vector: n nearly equal blocks, the first elems mod n one longer. */
    private long start(int b) {
        long base = elems / n;
        long extra = elems % n;
        return b * base + Math.min(b, extra);
    }

    /**
     * Folds elements [first, first + count) of every member's vector into {@code out} (at its start).
     *
     * @param vectorBytes the bytes of a whole vector, to read each member's payload
     */
    private void fold(long first, long count, MemorySegment out, long vectorBytes) {
        if (count == 0) {
            return;
        }
        MemorySegment[] in = new MemorySegment[n];
        long at = first * elemBytes;
        long bytes = count * elemBytes;
        for (int m = 0; m < n; m++) {
            MemorySegment whole = m == me ? send : payload(m, vectorBytes, false);
            if (whole == null) {
                return; // the failure is recorded; the members stay in step
            }
            in[m] = whole.asSlice(at, bytes);
        }
        TreeFold.fold(in, out, count, elemBytes, combiner, ch.scratch());
    }

    @Override
    boolean exposesBuffers() {
        return !small && elems > 0;
    }
}
