package dev.gdasync.gdsync.cuda;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The FFM probe that runs before JCuda, and the driver's refusal in this JVM when there is no driver. */
class DriverProbeTest {
    @Test
    void aMissingLibraryIsReportedWithWhatToDo() {
        assertEquals(Optional.of("libgdasync-absent.so.1 not found: install the NVIDIA driver or run on a GPU machine"),
                DriverLibrary.problem("libgdasync-absent.so.1"));
    }

    @Test
    void aLibraryWithoutTheDriverEntryPointsIsNotTheDriver() {
        Optional<String> p = DriverLibrary.problem("libm.so.6");
        assertEquals(Optional.of("libm.so.6 does not export cuInit: it is not the NVIDIA driver library; check "
                + "LD_LIBRARY_PATH"), p);
    }

    @Test
    void withoutLibcudaTheDriverRefusesTheSameWayEveryTime() {
        boolean absent = DriverLibrary.problem(DriverLibrary.NAME).isPresent();
        if (!absent) {
            System.out.println("SKIPPED: this machine has a libcuda.so.1; the no-driver path is tested in a child JVM");
        }
        assumeTrue(absent, "this machine has a libcuda.so.1");
        String expected = "libcuda.so.1 not found: install the NVIDIA driver or run on a GPU machine";
        assertEquals(Optional.of(expected), CudaDriver.unavailableReason());
        CudaException e = assertThrows(CudaException.class, CudaDriver::open);
        assertEquals(expected, e.getMessage());
        assertEquals(CudaException.NO_RESULT, e.result());
        assertEquals(expected, assertThrows(CudaException.class, CudaDriver::open).getMessage());
        assertTrue(CudaDriver.unavailableReason().isPresent());
    }
}
