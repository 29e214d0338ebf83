package dev.gdasync.libmp.coll.msccl;

/**
 * The limits a program is checked against when it is loaded (MSCCL's own are compile-time constants of its
 * kernel; these are the host interpreter's).
 *
 * @param maxGpus        ranks a program may have
 * @param maxChannels    {@code nchannels}
 * @param maxThreadBlocks thread blocks per gpu
 * @param maxSteps       steps per thread block
 * @param maxChunks      {@code nchunksperloop} and {@code s_chunks}
 */
public record MscclLimits(int maxGpus, int maxChannels, int maxThreadBlocks, int maxSteps, int maxChunks) {
    /** @return 1024 ranks, 32 channels, 128 thread blocks, 4096 steps, 65536 chunks */
    public static MscclLimits defaults() {
        return new MscclLimits(1024, 32, 128, 4096, 65_536);
    }
}
