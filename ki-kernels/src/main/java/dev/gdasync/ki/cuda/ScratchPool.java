package dev.gdasync.ki.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Device-visible host memory the executor owns for what it passes to kernels besides the table (exchange
 * control blocks and work, template arguments). A launch takes a block and gives it back when the launch
 * has ended, so the host never rewrites memory a running kernel reads; blocks are registered once and
 * reused. Blocks are whole pages, so no registration shares a page with other memory.
 */
final class ScratchPool {
    /** Blocks are multiples of this size and aligned to it. */
    static final long GRANULE = 4096;

    private final Arena arena;
    private final WorkWriter.Addresses addresses;
    private final List<Block> free = new ArrayList<>();
    private int allocated;

    /**
     * A block of scratch memory.
     *
     * @param segment       the memory
     * @param deviceAddress the device address of its first byte
     */
    record Block(MemorySegment segment, long deviceAddress) {
    }

    /**
     * @param arena     where blocks are allocated (the executor's; it outlives the pool)
     * @param addresses registers a block and names it on the device
     */
    ScratchPool(Arena arena, WorkWriter.Addresses addresses) {
        this.arena = arena;
        this.addresses = addresses;
    }

    /**
     * @param bytes at least this many bytes
     * @return a block not used by any running launch: the smallest free one that is large enough, or a new one
     */
    synchronized Block acquire(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("scratch size must be > 0, got " + bytes);
        }
        Block best = null;
        for (Block b : free) {
            if (b.segment().byteSize() >= bytes && (best == null || b.segment().byteSize() < best.segment().byteSize())) {
                best = b;
            }
        }
        if (best != null) {
            free.remove(best);
            return best;
        }
        long size = (bytes + GRANULE - 1) / GRANULE * GRANULE;
        MemorySegment segment = arena.allocate(size, GRANULE);
        Block b = new Block(segment, addresses.deviceAddressOf(segment));
        allocated++;
        return b;
    }

    /**
     * @param block a block from {@link #acquire} whose launch has ended
     */
    synchronized void release(Block block) {
        free.add(block);
    }

    /** @return blocks allocated so far */
    synchronized int allocated() {
        return allocated;
    }

    /** @return blocks free now */
    synchronized int free() {
        return free.size();
    }
}
