package dev.gdasync.gdsync.memory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link RegionKind#HOST} region: a shared-memory file mapped into this process. Peers on the node
 * map the same file by its path, which is how the software NIC moves bytes between processes with a
 * single copy. The region is exactly as long as asked; its file is rounded up to a whole page, and the
 * bytes past the region's end belong to no one.
 */
public final class HostRegion implements Region {
    private final long id;
    private final Path path;
    private final Arena arena;
    private final MemorySegment segment;
    private final ShmDirectory owner;
    private final List<Runnable> closeListeners = new CopyOnWriteArrayList<>();
    private volatile boolean open = true;

    HostRegion(long id, Path path, Arena arena, MemorySegment segment, ShmDirectory owner) {
        this.id = id;
        this.path = path;
        this.arena = arena;
        this.segment = segment;
        this.owner = owner;
    }

    @Override
    public RegionKind kind() {
        return RegionKind.HOST;
    }

    @Override
    public long id() {
        return id;
    }

    /** @return the length asked for, which the file behind the region may exceed by less than a page */
    @Override
    public long length() {
        return segment.byteSize();
    }

    @Override
    public MemorySegment segment() {
        if (!open) {
            throw new IllegalStateException("host region " + id + " is closed");
        }
        return segment;
    }

    @Override
    public long address() {
        return segment.address();
    }

    /** @return the shared-memory file behind the region */
    public Path path() {
        return path;
    }

    /**
     * Adds an action run when the region closes, before it is unmapped (a NIC deregisters it there).
     *
     * @param listener the action
     * @throws NullPointerException if the listener is null
     */
    public void addCloseListener(Runnable listener) {
        closeListeners.add(Objects.requireNonNull(listener, "listener must not be null"));
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        for (Runnable r : closeListeners) {
            r.run();
        }
        owner.forget(this);
        arena.close();
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException("could not remove " + path, e);
        }
    }

    @Override
    public String toString() {
        return "HostRegion{id=" + id + ", bytes=" + length() + ", path=" + path + "}";
    }
}
