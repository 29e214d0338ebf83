package dev.gdasync.gdsync.gdrcopy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * Device memory pinned by GDRCopy ({@code gdr_pin_buffer}): its GPU pages stay resident and can be mapped
 * into this process with {@link #map()}. One mapping at a time. {@link #close()} (or {@link #unpin()})
 * unmaps that mapping if it is still open, then unpins ({@code gdr_unpin_buffer}); again does nothing.
 */
public final class GdrPin implements AutoCloseable {
    private final GdrCopy gdr;
    private final long deviceAddress;
    private final long size;
    /** The {@code gdr_mh_t} the library filled, passed by value to every call about this buffer. */
    final MemorySegment memoryHandle;
    private GdrMapping mapping;
    private boolean unpinned;

    GdrPin(GdrCopy gdr, long deviceAddress, long size, MemorySegment memoryHandle) {
        this.gdr = gdr;
        this.deviceAddress = deviceAddress;
        this.size = size;
        this.memoryHandle = memoryHandle;
    }

    /** @return the handle this buffer was pinned through */
    public GdrCopy gdr() {
        return gdr;
    }

    /** @return the first pinned byte's device address, as given to {@link GdrCopy#pin} */
    public long deviceAddress() {
        return deviceAddress;
    }

    /** @return the size given to {@link GdrCopy#pin}; GDRCopy pins it rounded up to whole GPU pages */
    public long size() {
        return size;
    }

    /**
     * Asks GDRCopy about the buffer ({@code gdr_get_info_v2}, or {@code gdr_get_info} on GDRCopy 2.0 to 2.3).
     *
     * @return the buffer's info
     * @throws GdrException          if the call fails
     * @throws IllegalStateException if the buffer was unpinned
     */
    public GdrInfo info() {
        synchronized (gdr.lock) {
            checkPinned();
            return infoLocked();
        }
    }

    private GdrInfo infoLocked() {
        GdrLibrary library = gdr.library;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = arena.allocate(library.infoV2 ? GdrLibrary.INFO_V2 : GdrLibrary.INFO_V1);
            GdrException.check(library.getInfo(gdr.handle, memoryHandle, info),
                    (library.infoV2 ? GdrLibrary.GET_INFO_V2 : GdrLibrary.GET_INFO_V1) + "(" + this + ")");
            return GdrInfo.read(info, library.infoV2);
        }
    }

    /**
     * Maps the pinned pages into this process ({@code gdr_map}, of the whole {@link GdrInfo#mappedSize()}).
     *
     * @return the mapping: a native segment over all pinned pages, with the pinned address at
     *         {@link GdrMapping#offset()}
     * @throws GdrException          if the library refuses (out of BAR1 or address space, ...)
     * @throws IllegalStateException if the buffer was unpinned or is mapped already
     */
    public GdrMapping map() {
        synchronized (gdr.lock) {
            checkPinned();
            if (mapping != null) {
                throw new IllegalStateException(this + " is mapped already (" + mapping + "): use that mapping, or "
                        + "unmap it first");
            }
            GdrLibrary library = gdr.library;
            GdrInfo pinned = infoLocked();
            long offset = deviceAddress - pinned.va();
            if (offset < 0 || offset >= pinned.mappedSize()) {
                throw new IllegalStateException("GDRCopy reports " + pinned + " for " + this + ", which does not hold the "
                        + "pinned address");
            }
            MemorySegment address;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(ADDRESS);
                GdrException.check(library.map(gdr.handle, memoryHandle, out, pinned.mappedSize()),
                        "gdr_map(" + this + ", " + pinned.mappedSize() + " bytes)");
                address = out.get(ADDRESS, 0);
            }
            GdrInfo mapped;
            try {
                mapped = infoLocked();
            } catch (GdrException e) {
                library.unmap(gdr.handle, memoryHandle, address, pinned.mappedSize()); // leave nothing mapped behind
                throw e;
            }
            mapping = new GdrMapping(this, address.address(), pinned.mappedSize(), offset, mapped);
            return mapping;
        }
    }

    /** @return the open mapping, if any */
    public Optional<GdrMapping> mapping() {
        synchronized (gdr.lock) {
            return Optional.ofNullable(mapping);
        }
    }

    /** @return whether the buffer is still pinned */
    public boolean isPinned() {
        synchronized (gdr.lock) {
            return !unpinned;
        }
    }

    /** Same as {@link #close()}. */
    public void unpin() {
        close();
    }

    /**
     * Unmaps the buffer if it is mapped, then unpins it ({@code gdr_unpin_buffer}). Again, or after its
     * handle was closed, does nothing.
     *
     * @throws GdrException          if a call failed (the buffer counts as unpinned nonetheless)
     * @throws IllegalStateException if the mapping is in use by a copy on another thread; nothing changed
     */
    @Override
    public void close() {
        synchronized (gdr.lock) {
            unpinLocked();
        }
    }

    /** Called with the handle's lock held: by {@link #close()} and by the handle's own close. */
    void unpinLocked() {
        if (unpinned) {
            return;
        }
        GdrException unmapFailure = null;
        if (mapping != null) {
            try {
                mapping.unmapLocked(); // an IllegalStateException (mapping in use) leaves everything as it was
            } catch (GdrException e) {
                unmapFailure = e; // the mapping counts as unmapped: unpin all the same
            }
        }
        unpinned = true;
        gdr.forget(this);
        int result = gdr.library.unpinBuffer(gdr.handle, memoryHandle);
        if (unmapFailure != null) {
            throw unmapFailure;
        }
        GdrException.check(result, "gdr_unpin_buffer(" + this + ")");
    }

    /** Called with the handle's lock held, by a mapping that was unmapped. */
    void forget(GdrMapping unmapped) {
        if (mapping == unmapped) {
            mapping = null;
        }
    }

    private void checkPinned() {
        gdr.checkOpen();
        if (unpinned) {
            throw new IllegalStateException(this + " is unpinned");
        }
    }

    @Override
    public String toString() {
        return "pinned device memory 0x" + Long.toHexString(deviceAddress) + " (" + size + " bytes)";
    }
}
