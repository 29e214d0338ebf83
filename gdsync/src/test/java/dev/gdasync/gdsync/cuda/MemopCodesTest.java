package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.WaitCondition;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.CUstreamBatchMemOpType;
import jcuda.driver.CUstreamWaitValue_flags;
import jcuda.driver.CUstreamWriteValue_flags;
import jcuda.driver.CUstream_flags;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The memop numbers kept in Java agree with JCuda's copies of {@code cuda.h} (plain constants: no driver needed). */
class MemopCodesTest {
    @Test
    void operationTypes() {
        assertEquals(CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WAIT_VALUE_32, MemopCodes.OP_WAIT_VALUE_32);
        assertEquals(CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WRITE_VALUE_32, MemopCodes.OP_WRITE_VALUE_32);
        assertEquals(CUstreamBatchMemOpType.CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES, MemopCodes.OP_FLUSH_REMOTE_WRITES);
        assertEquals(CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WAIT_VALUE_64, MemopCodes.OP_WAIT_VALUE_64);
        assertEquals(CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WRITE_VALUE_64, MemopCodes.OP_WRITE_VALUE_64);
        assertEquals(CUstreamBatchMemOpType.CU_STREAM_MEM_OP_BARRIER, MemopCodes.OP_BARRIER);
        for (DriverOp.Kind k : DriverOp.Kind.values()) {
            if (k.isMemop()) {
                assertEquals(k.code(), switch (k) {
                    case WAIT_VALUE_32 -> MemopCodes.OP_WAIT_VALUE_32;
                    case WRITE_VALUE_32 -> MemopCodes.OP_WRITE_VALUE_32;
                    case WAIT_VALUE_64 -> MemopCodes.OP_WAIT_VALUE_64;
                    case WRITE_VALUE_64 -> MemopCodes.OP_WRITE_VALUE_64;
                    default -> MemopCodes.OP_BARRIER;
                });
            }
        }
    }

    @Test
    void flags() {
        assertEquals(CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ, MemopCodes.WAIT_GEQ);
        assertEquals(CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_EQ, MemopCodes.WAIT_EQ);
        assertEquals(CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_AND, MemopCodes.WAIT_AND);
        assertEquals(CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_NOR, MemopCodes.WAIT_NOR);
        assertEquals(CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_FLUSH, MemopCodes.WAIT_FLUSH);
        assertEquals(CUstreamWriteValue_flags.CU_STREAM_WRITE_VALUE_DEFAULT, MemopCodes.WRITE_DEFAULT);
        assertEquals(CUstreamWriteValue_flags.CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, MemopCodes.WRITE_NO_MEMORY_BARRIER);
        assertEquals(CUstream_flags.CU_STREAM_NON_BLOCKING, MemopCodes.STREAM_NON_BLOCKING);
        // LibGDSync's condition codes, which WaitCondition keeps, are CUDA's.
        assertEquals(MemopCodes.WAIT_GEQ, WaitCondition.GEQ.code());
        assertEquals(MemopCodes.WAIT_EQ, WaitCondition.EQ.code());
        assertEquals(MemopCodes.WAIT_AND, WaitCondition.AND.code());
        assertEquals(MemopCodes.WAIT_NOR, WaitCondition.NOR.code());
    }

    @Test
    void attributesAndResults() {
        assertEquals(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, MemopCodes.ATTR_STREAM_MEM_OPS_V1);
        assertEquals(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, MemopCodes.ATTR_FLUSH_REMOTE_WRITES);
        assertEquals(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
                MemopCodes.ATTR_64_BIT_STREAM_MEM_OPS);
        assertEquals(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR,
                MemopCodes.ATTR_STREAM_WAIT_VALUE_NOR);
        assertEquals(CUresult.CUDA_ERROR_NOT_SUPPORTED, MemopCodes.ERROR_NOT_SUPPORTED);
        assertEquals(CUresult.CUDA_ERROR_INVALID_VALUE, MemopCodes.ERROR_INVALID_VALUE);
    }
}
