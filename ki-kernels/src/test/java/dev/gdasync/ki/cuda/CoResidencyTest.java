package dev.gdasync.ki.cuda;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The rule that every block of the exchange kernel is resident at once. */
class CoResidencyTest {
    @Test
    void blocksUpToOccupancyTimesMultiprocessorsFit() {
        assertEquals(Optional.empty(), CoResidency.problem("exchange", "NVIDIA X", 8, 128, 2, 4, true));
        assertEquals(Optional.empty(), CoResidency.problem("exchange", "NVIDIA X", 1, 128, 1, 1, true));
    }

    @Test
    void oneBlockTooManyIsRefusedWithTheNumbers() {
        assertEquals(Optional.of("exchange needs 9 co-resident blocks of 128 threads; NVIDIA X holds at most 8 (2 per "
                + "multiprocessor × 4): lower the pack or unpack blocks"),
                CoResidency.problem("exchange", "NVIDIA X", 9, 128, 2, 4, true));
    }

    @Test
    void aKernelThatDoesNotFitAtAllIsExplained() {
        assertEquals(Optional.of("exchange cannot run blocks of 128 threads on NVIDIA X (the occupancy calculator gives "
                + "0 blocks per multiprocessor): the kernel uses too many registers or too much shared memory for this "
                + "GPU"), CoResidency.problem("exchange", "NVIDIA X", 2, 128, 0, 132, true));
    }

    @Test
    void withoutCooperativeLaunchNothingFits() {
        assertEquals(Optional.of("exchange needs a cooperative launch (its 3 blocks wait on each other), and NVIDIA X "
                + "does not support one (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0): run it on the host KI executor, "
                + "or on a GPU of compute capability 6.0 or newer without MPS limits"),
                CoResidency.problem("exchange", "NVIDIA X", 3, 128, 16, 132, false));
    }

    @Test
    void largeDevicesDoNotOverflow() {
        assertEquals(Optional.empty(), CoResidency.problem("exchange", "big", 8193, 128, 65536, 65536, true));
    }
}
