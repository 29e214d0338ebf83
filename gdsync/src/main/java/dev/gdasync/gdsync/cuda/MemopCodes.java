package dev.gdasync.gdsync.cuda;

/**
 * The numbers of CUDA's stream memory operations, as {@code cuda.h} declares them: batch operation types
 * ({@code CUstreamBatchMemOpType}), wait and write flags, barrier scopes, and the device attributes that say
 * what a GPU supports. Kept here, not read from JCuda, so that the translation and the batch layout are
 * plain Java that tests check without a driver (the tests also compare them with JCuda's constants).
 */
final class MemopCodes {
    /** {@code CU_STREAM_MEM_OP_WAIT_VALUE_32}. */
    static final int OP_WAIT_VALUE_32 = 1;
    /** {@code CU_STREAM_MEM_OP_WRITE_VALUE_32}. */
    static final int OP_WRITE_VALUE_32 = 2;
    /** {@code CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES}. */
    static final int OP_FLUSH_REMOTE_WRITES = 3;
    /** {@code CU_STREAM_MEM_OP_WAIT_VALUE_64}. */
    static final int OP_WAIT_VALUE_64 = 4;
    /** {@code CU_STREAM_MEM_OP_WRITE_VALUE_64}. */
    static final int OP_WRITE_VALUE_64 = 5;
    /** {@code CU_STREAM_MEM_OP_BARRIER} (the v2 API only). */
    static final int OP_BARRIER = 6;

    /** {@code CU_STREAM_WAIT_VALUE_GEQ}: {@code (int32_t)(*addr - value) >= 0}. */
    static final int WAIT_GEQ = 0;
    /** {@code CU_STREAM_WAIT_VALUE_EQ}. */
    static final int WAIT_EQ = 1;
    /** {@code CU_STREAM_WAIT_VALUE_AND}. */
    static final int WAIT_AND = 2;
    /** {@code CU_STREAM_WAIT_VALUE_NOR}. */
    static final int WAIT_NOR = 3;
    /** {@code CU_STREAM_WAIT_VALUE_FLUSH}: flush remote (GPUDirect RDMA) writes after the wait. */
    static final int WAIT_FLUSH = 1 << 30;

    /** {@code CU_STREAM_WRITE_VALUE_DEFAULT}. */
    static final int WRITE_DEFAULT = 0;
    /** {@code CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER}: the v1 API only; the v2 entry points refuse it. */
    static final int WRITE_NO_MEMORY_BARRIER = 1;

    /** {@code CU_STREAM_MEMORY_BARRIER_TYPE_SYS}. */
    static final int BARRIER_SYS = 0;
    /** {@code CU_STREAM_MEMORY_BARRIER_TYPE_GPU}. */
    static final int BARRIER_GPU = 1;

    /** {@code CU_STREAM_NON_BLOCKING}. */
    static final int STREAM_NON_BLOCKING = 1;

    /** {@code CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1}: the legacy (v1) memops, enabled by a module option. */
    static final int ATTR_STREAM_MEM_OPS_V1 = 92;
    /** {@code CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES}. */
    static final int ATTR_FLUSH_REMOTE_WRITES = 98;
    /** {@code CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS}. */
    static final int ATTR_64_BIT_STREAM_MEM_OPS = 122;
    /** {@code CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR}. */
    static final int ATTR_STREAM_WAIT_VALUE_NOR = 123;

    /** {@code cuStreamBatchMemOp} takes fewer than 256 operations per call. */
    static final int MAX_BATCH = 255;

    /** The first driver version (CUDA 11.7) with the v2 memop API, on by default, with the barrier operation. */
    static final int V2_DRIVER_VERSION = 11070;

    /** {@code CUDA_ERROR_INVALID_VALUE}. */
    static final int ERROR_INVALID_VALUE = 1;
    /** {@code CUDA_ERROR_NOT_SUPPORTED}: what a memop call answers when the driver has memops disabled. */
    static final int ERROR_NOT_SUPPORTED = 801;

    private MemopCodes() {
    }
}
