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
     * @throws NullPointerException if the array or an element is null
     */
    public static MemopBatch of(Memop... ops) {
        Objects.requireNonNull(ops, "ops must not be null");
        Memop[] copy = ops.clone();
        for (int i = 0; i < copy.length; i++) {
            if (copy[i] == null) {
                throw new NullPointerException("ops[" + i + "] must not be null");
            }
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
        return new MemopBatch(new Memop[] {Objects.requireNonNull(first, "first must not be null"),
            Objects.requireNonNull(second, "second must not be null")});
    }

    /**
     * A batch of the given memops, in order.
     *
     * @param ops the memops
     * @return the batch
     * @throws NullPointerException if the list or an element is null
     */
    public static MemopBatch of(List<? extends Memop> ops) {
        Objects.requireNonNull(ops, "ops must not be null");
        return of(ops.toArray(new Memop[0]));
    }

    /**
     * A builder that collects memops and batches into one batch without copying them twice.
     *
     * @param capacity expected number of memops, {@code >= 0}
     * @return the builder
     * @throws IllegalArgumentException if the capacity is negative
     */
    public static Builder builder(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, got " + capacity);
        }
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
         * @throws NullPointerException if the memop is null
         */
        public Builder add(Memop op) {
            Objects.requireNonNull(op, "op must not be null");
            if (size == ops.length) {
                ops = java.util.Arrays.copyOf(ops, size * 2);
            }
            ops[size++] = op;
            return this;
        }

        /**
         * @param batch memops to append, in order
         * @return this
         * @throws NullPointerException if the batch is null
         */
        public Builder addAll(MemopBatch batch) {
            Objects.requireNonNull(batch, "batch must not be null");
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
