package dev.gdasync.gdsync.memop;

import java.util.AbstractList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * An immutable, ordered list of memops submitted to a stream as one unit (one
 * {@code cuStreamBatchMemOp} on a GPU).
 */
public final class MemopBatch extends AbstractList<Memop> implements RandomAccess {
    private static final MemopBatch EMPTY = new MemopBatch(new Memop[0]);

    private final Memop[] ops;

    private MemopBatch(Memop[] ops) {
        this.ops = ops;
    }

    /**
     * A batch of the given memops, in order.
     *
     * @param ops the memops
     * @return the batch
     * @throws NullPointerException if an element is null
     */
    public static MemopBatch of(Memop... ops) {
        Memop[] copy = ops.clone();
        for (int i = 0; i < copy.length; i++) {
            Objects.requireNonNull(copy[i], "memop " + i);
        }
        return copy.length == 0 ? EMPTY : new MemopBatch(copy);
    }

    /**
     * A batch of two memops, the shape of every prepared send and wait.
     *
     * @param first  the first memop
     * @param second the second memop
     * @return the batch
     * @throws NullPointerException if either is null
     */
    public static MemopBatch of(Memop first, Memop second) {
        return new MemopBatch(new Memop[] {Objects.requireNonNull(first, "memop 0"), Objects.requireNonNull(second, "memop 1")});
    }

    /**
     * A batch of the given memops, in order.
     *
     * @param ops the memops
     * @return the batch
     * @throws NullPointerException if an element is null
     */
    public static MemopBatch of(List<? extends Memop> ops) {
        return of(ops.toArray(new Memop[0]));
    }

    /**
     * A builder that collects memops and batches into one batch without copying them twice.
     *
     * @param capacity expected number of memops
     * @return the builder
     */
    public static Builder builder(int capacity) {
        return new Builder(capacity);
    }

    /** Collects memops in order; {@link #build()} hands its array to the batch. */
    public static final class Builder {
        private Memop[] ops;
        private int size;

        private Builder(int capacity) {
            ops = new Memop[Math.max(capacity, 2)];
        }

        /**
         * @param op a memop
         * @return this
         */
        public Builder add(Memop op) {
            Objects.requireNonNull(op, "memop");
            if (size == ops.length) {
                ops = java.util.Arrays.copyOf(ops, size * 2);
            }
            ops[size++] = op;
            return this;
        }

        /**
         * @param batch memops to append, in order
         * @return this
         */
        public Builder addAll(MemopBatch batch) {
            if (size + batch.ops.length > ops.length) {
                ops = java.util.Arrays.copyOf(ops, Math.max(ops.length * 2, size + batch.ops.length));
            }
            System.arraycopy(batch.ops, 0, ops, size, batch.ops.length);
            size += batch.ops.length;
            return this;
        }

        /** @return the batch; the builder must not be used afterwards */
        public MemopBatch build() {
            Memop[] out = size == ops.length ? ops : java.util.Arrays.copyOf(ops, size);
            ops = null;
            return size == 0 ? EMPTY : new MemopBatch(out);
        }
    }

    /** @return the empty batch */
    public static MemopBatch empty() {
        return EMPTY;
    }

    @Override
    public Memop get(int index) {
        return ops[index];
    }

    @Override
    public int size() {
        return ops.length;
    }
}
