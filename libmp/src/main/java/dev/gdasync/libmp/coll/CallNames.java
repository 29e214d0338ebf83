package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.shm.ShmCall;
import dev.gdasync.libmp.coll.shm.ShmChannel;

/**
 * Names a call of the shared-memory path as the user made it ({@code allreduce of 8 bytes (INT32 SUM)}, {@code bcast
 * of 4096 bytes from root 1}), for the messages of failures and disagreements. Type and operator codes are the enums'
 * ordinals plus one.
 */
final class CallNames implements ShmChannel.Names {
    static final CallNames INSTANCE = new CallNames();

    private static final DataType[] TYPES = DataType.values();
    private static final ReduceOp[] OPS = ReduceOp.values();

    private CallNames() {
    }

    static int code(DataType type) {
        return type.ordinal() + 1;
    }

    static int code(ReduceOp op) {
        return op.ordinal() + 1;
    }

    @Override
    public String describe(ShmCall call) {
        StringBuilder b = new StringBuilder(call.kind().callName());
        switch (call.kind()) {
            case BARRIER, ALLTOALLV -> {
            }
            case ALLGATHER, ALLTOALL -> b.append(" of ").append(call.bytes()).append(" bytes per rank");
            case REDUCE_SCATTER -> b.append(" of ").append(call.bytes()).append(" bytes per rank");
            default -> b.append(" of ").append(call.bytes()).append(" bytes");
        }
        if (call.type() > 0) {
            b.append(" (").append(name(TYPES, call.type())).append(' ').append(name(OPS, call.op())).append(')');
        }
        if (call.root() >= 0) {
            b.append(call.kind() == ShmCall.Kind.BCAST ? " from root " : " to root ").append(call.root());
        }
        return b.toString();
    }

    private static String name(Enum<?>[] values, int code) {
        return code >= 1 && code <= values.length ? values[code - 1].name() : "code " + code;
    }
}
