package dev.gdasync.gdsync.cuda;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Result names, advice and versions: the words of every CUDA error message. */
class CudaResultsTest {
    @Test
    void namesComeFromJCudaWithTheCode() {
        assertEquals("CUDA_ERROR_NO_DEVICE (100)", CudaResults.name(100));
        assertEquals("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED (712)", CudaResults.name(712));
        assertEquals("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE (720)", CudaResults.name(720));
    }

    @Test
    void failuresSayWhatToDo() {
        for (int code : new int[] {34, 46, 100, 101, 209, 218, 222, 223, 700, 712, 719, 720, 801, 803, 804, 999}) {
            assertFalse(CudaResults.advice(code).isEmpty(), "advice for " + code);
        }
        assertEquals("", CudaResults.advice(1));
        assertEquals("cuFoo failed with CUDA_ERROR_INVALID_VALUE (1)", CudaResults.describe(1, "cuFoo"));
        assertEquals("cuInit failed with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): libcuda.so.1 and the loaded NVIDIA "
                + "kernel module are different versions: reboot, or reinstall the driver", CudaResults.describe(803, "cuInit"));
    }

    @Test
    void checkThrowsOnlyOnFailureAndKeepsTheCode() {
        assertDoesNotThrow(() -> CudaException.check(0, "cuInit"));
        CudaException e = assertThrows(CudaException.class, () -> CudaException.check(222, "cuModuleLoadData"));
        assertEquals(222, e.result());
        assertTrue(e.getMessage().startsWith("cuModuleLoadData failed with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): "),
                e.getMessage());
    }

    @Test
    void driverVersionsAreFormattedAndTheMinimumIsCuda12() {
        assertEquals("12.4", DriverVersion.format(12040));
        assertEquals("11.8", DriverVersion.format(11080));
        assertEquals("13.0", DriverVersion.format(13000));
        assertEquals(Optional.empty(), DriverVersion.tooOld(12000));
        assertEquals(Optional.empty(), DriverVersion.tooOld(13000));
        assertEquals(Optional.of("the NVIDIA driver supports CUDA 11.8, but gdasync's CUDA binding (JCuda 12.6.0) needs "
                + "CUDA 12.0 or newer: update the NVIDIA driver to R525 or newer"), DriverVersion.tooOld(11080));
    }

    @Test
    void rawPointersCarryTheirAddress() {
        assertTrue(CudaPointers.host(0x7f00_1234_5000L).toString().contains("0x7f0012345000"),
                CudaPointers.host(0x7f00_1234_5000L).toString());
        assertEquals(0, CudaPointers.address(CudaPointers.deviceOut()));
        assertThrows(IllegalArgumentException.class, () -> CudaPointers.address(new jcuda.driver.CUdeviceptr()));
    }
}
