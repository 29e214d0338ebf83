package dev.gdasync.ki.cuda;

import java.util.Optional;

/**
 * Whether all blocks of a cooperative launch fit on a device at once. The exchange kernel's blocks spin on
 * each other (unpack blocks on the receiver, pack blocks on the send order), so a block that waits for a
 * free multiprocessor would never start: the launch must fit entirely, or not happen. The bound is what the
 * driver's occupancy calculator allows per multiprocessor, times the multiprocessors.
 */
final class CoResidency {
    private CoResidency() {
    }

    /**
     * @param kernel          the kernel, for the message
     * @param device          the device's name, for the message
     * @param blocks          blocks of the launch
     * @param threadsPerBlock threads per block
     * @param blocksPerSm     {@code cuOccupancyMaxActiveBlocksPerMultiprocessor} for that block size
     * @param multiprocessors the device's multiprocessors
     * @param cooperative     the device's {@code CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH}
     * @return why the launch cannot run, or empty when it fits
     */
    static Optional<String> problem(String kernel, String device, int blocks, int threadsPerBlock, int blocksPerSm,
                                    int multiprocessors, boolean cooperative) {
        return problem(kernel, device, blocks, threadsPerBlock, blocksPerSm, multiprocessors, cooperative,
                "lower the pack or unpack blocks");
    }

    /**
     * As {@link #problem(String, String, int, int, int, int, boolean)}, with what to do when the grid is too large.
     *
     * @param remedy the advice after "holds at most N (...): "
     * @return why the launch cannot run, or empty when it fits
     */
    static Optional<String> problem(String kernel, String device, int blocks, int threadsPerBlock, int blocksPerSm,
                                    int multiprocessors, boolean cooperative, String remedy) {
        if (!cooperative) {
            return Optional.of(kernel + " needs a cooperative launch (its " + blocks + " blocks wait on each other), "
                    + "and " + device + " does not support one (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0): run it "
                    + "on the host KI executor, or on a GPU of compute capability 6.0 or newer without MPS limits");
        }
        long capacity = (long) blocksPerSm * multiprocessors;
        if (blocks <= capacity) {
            return Optional.empty();
        }
        if (blocksPerSm == 0) {
            return Optional.of(kernel + " cannot run blocks of " + threadsPerBlock + " threads on " + device
                    + " (the occupancy calculator gives 0 blocks per multiprocessor): the kernel uses too many "
                    + "registers or too much shared memory for this GPU");
        }
        return Optional.of(kernel + " needs " + blocks + " co-resident blocks of " + threadsPerBlock + " threads; "
                + device + " holds at most " + capacity + " (" + blocksPerSm + " per multiprocessor × " + multiprocessors
                + "): " + remedy);
    }
}
