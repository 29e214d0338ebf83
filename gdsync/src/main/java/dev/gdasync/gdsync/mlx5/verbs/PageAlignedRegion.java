package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A {@link RegionKind#HOST} region of private, zero-filled, page-aligned memory of this process, for a NIC to
 * register. Whole pages are allocated, so that a registration, which pins whole pages, pins nothing else of the
 * process's heap.
 */
final class PageAlignedRegion implements Region {
    private final long id;
    private final Arena arena;
    private final MemorySegment segment;
    private final Consumer<PageAlignedRegion> beforeRelease;
    private final AtomicBoolean open = new AtomicBoolean(true);

    private PageAlignedRegion(long id, Arena arena, MemorySegment segment, Consumer<PageAlignedRegion> beforeRelease) {
        this.id = id;
        this.arena = arena;
        this.segment = segment;
        this.beforeRelease = beforeRelease;
    }

    /**
     * @param id            the region's id, unique among its owner's regions
     * @param bytes         the length, at least 1
     * @param pageSize      the page size, a power of two
     * @param beforeRelease what runs when the region closes, before the memory is freed (its owner deregisters it)
     * @return the region
     * @throws IllegalArgumentException if the length is not positive
     */
    static PageAlignedRegion allocate(long id, long bytes, int pageSize, Consumer<PageAlignedRegion> beforeRelease) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("a host region needs at least 1 byte, got " + bytes);
        }
        long rounded = (bytes + pageSize - 1) & -(long) pageSize;
        Arena arena = Arena.ofShared();
        try {
            MemorySegment pages = arena.allocate(rounded, pageSize);
            return new PageAlignedRegion(id, arena, pages.asSlice(0, bytes), beforeRelease);
        } catch (RuntimeException | OutOfMemoryError e) {
            arena.close();
            throw e;
        }
    }

    @Override
    public RegionKind kind() {
        return RegionKind.HOST;
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public long length() {
        return segment.byteSize();
    }

    @Override
    public MemorySegment segment() {
        if (!open.get()) {
            throw new IllegalStateException("host region " + id + " is closed");
        }
        return segment;
    }

    @Override
    public long address() {
        return segment.address();
    }

    @Override
    public boolean isOpen() {
        return open.get();
    }

    /**
     * Runs the owner's release action, then frees the memory. Holds no lock of its own while the owner runs, so that
     * the owner may close its regions under its lock.
     */
    @Override
    public void close() {
        if (!open.compareAndSet(true, false)) {
            return;
        }
        try {
            beforeRelease.accept(this);
        } finally {
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "PageAlignedRegion{id=" + id + ", bytes=" + segment.byteSize() + ", address=0x"
                + Long.toHexString(segment.address()) + "}";
    }
}
