package dev.gdasync.gdsync.cuda;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the attributes and the batch probe decide, and the messages that say what to do. */
class CudaCapabilitiesTest {
    private static final String GPU = "GPU X (device 0)";

    @Test
    void aCurrentDriverWithAWorkingProbeHasEverythingTheAttributesSay() {
        CudaCapabilities c = CudaCapabilities.decide(GPU, 12040, 0, 1, 1, 0, true, 0);
        assertTrue(c.streamMemops() && c.batchMemop() && c.v2() && c.barrierOp());
        assertTrue(c.memops64() && c.waitNor());
        assertFalse(c.flushRemoteWrites());
        assertEquals(Optional.empty(), c.problem());
        c.require();
        assertEquals("GPU X (device 0): stream memops v2, batched, 64-bit, wait NOR, no remote-write flush", c.toString());
        CudaCapabilities bare = CudaCapabilities.decide(GPU, 12040, 1, 0, 0, 1, true, 0);
        assertEquals("GPU X (device 0): stream memops v2, batched, 32-bit only, no wait NOR, remote-write flush",
                bare.toString());
    }

    @Test
    void notSupportedFromTheProbeMeansMemopsAreDisabledInTheDriver() {
        CudaCapabilities c = CudaCapabilities.decide(GPU, 12040, 0, 1, 1, 1, true, 801);
        assertFalse(c.streamMemops() || c.batchMemop() || c.memops64() || c.waitNor() || c.flushRemoteWrites());
        String message = c.problem().orElseThrow();
        assertTrue(message.startsWith("stream memops are disabled in the NVIDIA driver: load the nvidia module with "
                + "NVreg_EnableStreamMemOPs=1 (for example 'options nvidia NVreg_EnableStreamMemOPs=1' in /etc/modprobe.d,"
                + " then reload the module or reboot)"), message);
        assertTrue(message.endsWith("; an empty cuStreamBatchMemOp answered CUDA_ERROR_NOT_SUPPORTED (801) (GPU X "
                + "(device 0), driver for CUDA 12.4)"), message);
        CudaException e = assertThrows(CudaException.class, c::require);
        assertEquals(message, e.getMessage());
        assertEquals(801, e.result());
        assertEquals("GPU X (device 0): no stream memops", c.toString());
    }

    @Test
    void anotherProbeResultLeavesSingleCallsOnly() {
        CudaCapabilities c = CudaCapabilities.decide(GPU, 12040, 0, 1, 1, 0, true, 1);
        assertTrue(c.streamMemops() && c.v2());
        assertFalse(c.batchMemop() || c.barrierOp());
        assertEquals(1, c.batchProbeResult());
        assertTrue(c.toString().contains("one call each"), c.toString());
        CudaCapabilities unexported = CudaCapabilities.decide(GPU, 12040, 0, 1, 1, 0, false, 0);
        assertTrue(unexported.streamMemops());
        assertFalse(unexported.batchMemop());
        assertEquals(CudaException.NO_RESULT, unexported.batchProbeResult());
    }

    @Test
    void aDriverOlderThanTheV2ApiNeedsTheModuleOption() {
        CudaCapabilities off = CudaCapabilities.decide(GPU, 11040, 0, 1, 1, 0, true, 0);
        assertFalse(off.streamMemops());
        String message = off.problem().orElseThrow();
        assertTrue(message.startsWith(CudaCapabilities.DISABLED + ", or update the driver to CUDA 11.7 (R515) or newer, "
                + "which enables them by default: CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 is 0"), message);
        assertTrue(message.endsWith("(GPU X (device 0), driver for CUDA 11.4)"), message);
        assertEquals(CudaException.NO_RESULT, assertThrows(CudaException.class, off::require).result());
        CudaCapabilities on = CudaCapabilities.decide(GPU, 11040, 1, 1, 0, 0, true, 0);
        assertTrue(on.streamMemops() && on.batchMemop());
        assertFalse(on.v2() || on.barrierOp());
        assertTrue(on.toString().contains("stream memops v1"), on.toString());
    }
}
