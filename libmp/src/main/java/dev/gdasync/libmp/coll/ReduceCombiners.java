package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.shm.Combiner;

/** One {@link Combiner} per element type and operator, made once: a reduction's call allocates none. */
final class ReduceCombiners {
    private static final Combiner[][] ALL = new Combiner[DataType.values().length][ReduceOp.values().length];

    static {
        for (DataType t : DataType.values()) {
            for (ReduceOp o : ReduceOp.values()) {
                ALL[t.ordinal()][o.ordinal()] = (acc, in, count) -> o.apply(t, acc, in, count);
            }
        }
    }

    private ReduceCombiners() {
    }

    static Combiner of(DataType type, ReduceOp op) {
        return ALL[type.ordinal()][op.ordinal()];
    }
}
