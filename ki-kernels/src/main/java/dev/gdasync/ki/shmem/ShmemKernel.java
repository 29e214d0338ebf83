package dev.gdasync.ki.shmem;

/**
 * The body of a shmem kernel on the host KI executor: what one block does with its context. The executor runs it
 * once per block, on the block's thread, then ends the block ({@code gds_shmem::block_exit}) whether it returned or
 * threw.
 */
@FunctionalInterface
public interface ShmemKernel {
    /**
     * Runs one block.
     *
     * @param ctx the block's context
     */
    void run(ShmemDevice ctx);
}
