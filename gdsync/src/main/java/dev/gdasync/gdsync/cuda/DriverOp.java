package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.Memop;

import java.util.Objects;

/**
 * One operation a CUDA stream is given for a memop: a stream memory operation of {@code cuda.h}, or a
 * copy the host does when the stream reaches it. {@link MemopTranslator} makes them; {@link CudaStream}
 * submits runs of them in one {@code cuStreamBatchMemOp_v2} call or one call each.
 *
 * @param kind    what the operation is
 * @param address the device address it writes or waits on ({@link Kind#HOST_COPY}: the host address of the
 *                destination; {@link Kind#BARRIER}: 0)
 * @param value   the value written or compared ({@link Kind#HOST_COPY}: the number of bytes; {@link Kind#BARRIER}: 0)
 * @param flags   the operation's flags as the driver takes them (wait condition and flush, write flags, barrier
 *                scope)
 * @param source  the memop it comes from, for messages (a {@link Memop.WriteMemory} for a host copy)
 */
record DriverOp(Kind kind, long address, long value, int flags, Memop source) {

    /** The operations, with their {@code CUstreamBatchMemOpType} codes. */
    enum Kind {
        /** {@code CU_STREAM_MEM_OP_WAIT_VALUE_32}. */
        WAIT_VALUE_32(MemopCodes.OP_WAIT_VALUE_32),
        /** {@code CU_STREAM_MEM_OP_WRITE_VALUE_32}. */
        WRITE_VALUE_32(MemopCodes.OP_WRITE_VALUE_32),
        /** {@code CU_STREAM_MEM_OP_WAIT_VALUE_64}. */
        WAIT_VALUE_64(MemopCodes.OP_WAIT_VALUE_64),
        /** {@code CU_STREAM_MEM_OP_WRITE_VALUE_64}. */
        WRITE_VALUE_64(MemopCodes.OP_WRITE_VALUE_64),
        /** {@code CU_STREAM_MEM_OP_BARRIER}. */
        BARRIER(MemopCodes.OP_BARRIER),
        /** A host function that copies staged bytes: not a driver memop. */
        HOST_COPY(0);

        private final int code;

        Kind(int code) {
            this.code = code;
        }

        /** @return the {@code CUstreamBatchMemOpType} code, 0 for {@link #HOST_COPY} */
        int code() {
            return code;
        }

        /** @return whether the driver executes it as a stream memory operation */
        boolean isMemop() {
            return this != HOST_COPY;
        }
    }

    DriverOp {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(source, "source");
    }

    /** @return the operation without its source, e.g. {@code WRITE_VALUE_32 0x1000 = 0x5 flags 0x0} */
    String brief() {
        return switch (kind) {
            case BARRIER -> "BARRIER flags 0x" + Integer.toHexString(flags);
            case HOST_COPY -> "HOST_COPY 0x" + Long.toHexString(address) + " " + value + " bytes";
            default -> kind + " 0x" + Long.toHexString(address) + " = 0x" + Long.toHexString(value) + " flags 0x"
                    + Integer.toHexString(flags);
        };
    }

    @Override
    public String toString() {
        return brief() + " (" + source + ")";
    }
}
