package dev.gdasync.gdsync.cuda;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.List;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * The parameter array of {@code cuStreamBatchMemOp_v2}: one {@code CUstreamBatchMemOpParams} union per
 * operation, 48 bytes each, laid out as {@code cuda.h} declares it (x86-64 and aarch64 Linux):
 *
 * <pre>
 * offset  waitValue / writeValue       memoryBarrier / flushRemoteWrites
 *  0      uint32 operation             uint32 operation
 *  4      (padding)                    uint32 flags
 *  8      CUdeviceptr address
 * 16      uint32 value | uint64 value64
 * 24      uint32 flags
 * 28      (padding)
 * 32      CUdeviceptr alias (driver use)
 * 40      (padding to uint64 pad[6])
 * </pre>
 */
final class BatchParams {
    /** {@code struct CUstreamMemOpWaitValueParams_st} and, identical, {@code CUstreamMemOpWriteValueParams_st}. */
    static final StructLayout VALUE = MemoryLayout.structLayout(
            ValueLayout.JAVA_INT.withName("operation"),
            MemoryLayout.paddingLayout(4),
            ValueLayout.JAVA_LONG.withName("address"),
            MemoryLayout.unionLayout(ValueLayout.JAVA_INT.withName("value"), ValueLayout.JAVA_LONG.withName("value64"))
                    .withName("v"),
            ValueLayout.JAVA_INT.withName("flags"),
            MemoryLayout.paddingLayout(4),
            ValueLayout.JAVA_LONG.withName("alias"));

    /** {@code struct CUstreamMemOpMemoryBarrierParams_st} (and the flush one, which has the same shape). */
    static final StructLayout BARRIER = MemoryLayout.structLayout(
            ValueLayout.JAVA_INT.withName("operation"),
            ValueLayout.JAVA_INT.withName("flags"));

    /** {@code union CUstreamBatchMemOpParams_union}. */
    static final UnionLayout PARAMS = MemoryLayout.unionLayout(
            VALUE.withName("waitValue"),
            VALUE.withName("writeValue"),
            BARRIER.withName("flushRemoteWrites"),
            BARRIER.withName("memoryBarrier"),
            MemoryLayout.sequenceLayout(6, ValueLayout.JAVA_LONG).withName("pad"));

    /** Bytes per operation. */
    static final long SIZE = PARAMS.byteSize();

    private static final VarHandle OPERATION = handle(VALUE, "operation");
    private static final VarHandle ADDRESS = handle(VALUE, "address");
    private static final VarHandle VALUE32 = VALUE.varHandle(groupElement("v"), groupElement("value"));
    private static final VarHandle VALUE64 = VALUE.varHandle(groupElement("v"), groupElement("value64"));
    private static final VarHandle FLAGS = handle(VALUE, "flags");
    private static final VarHandle BARRIER_FLAGS = handle(BARRIER, "flags");

    private BatchParams() {
    }

    private static VarHandle handle(StructLayout layout, String field) {
        return layout.varHandle(groupElement(field));
    }

    /**
     * @param layout a struct of this class
     * @param field  a field name
     * @return the field's byte offset
     */
    static long offsetOf(StructLayout layout, String field) {
        return layout.byteOffset(groupElement(field));
    }

    /**
     * Writes operations {@code from..to-1} as params at the start of {@code out}, zeroing what they do not use.
     *
     * @param ops  the operations; every one must be a driver memop
     * @param from the first
     * @param to   one past the last
     * @param out  at least {@code (to - from) * SIZE} bytes
     * @return the slice of {@code out} written
     * @throws IllegalArgumentException if an operation is a host copy
     */
    static MemorySegment encode(List<DriverOp> ops, int from, int to, MemorySegment out) {
        MemorySegment params = out.asSlice(0, (to - from) * SIZE);
        params.fill((byte) 0);
        for (int i = from; i < to; i++) {
            DriverOp op = ops.get(i);
            long base = (i - from) * SIZE;
            switch (op.kind()) {
                case BARRIER -> {
                    OPERATION.set(params, base, op.kind().code());
                    BARRIER_FLAGS.set(params, base, op.flags());
                }
                case WAIT_VALUE_32, WRITE_VALUE_32 -> {
                    OPERATION.set(params, base, op.kind().code());
                    ADDRESS.set(params, base, op.address());
                    VALUE32.set(params, base, (int) op.value());
                    FLAGS.set(params, base, op.flags());
                }
                case WAIT_VALUE_64, WRITE_VALUE_64 -> {
                    OPERATION.set(params, base, op.kind().code());
                    ADDRESS.set(params, base, op.address());
                    VALUE64.set(params, base, op.value());
                    FLAGS.set(params, base, op.flags());
                }
                case HOST_COPY -> throw new IllegalArgumentException("a host copy is not a stream memop: " + op);
            }
        }
        return params;
    }
}
