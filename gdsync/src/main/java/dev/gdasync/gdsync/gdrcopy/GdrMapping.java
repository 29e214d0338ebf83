package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.memop.MemoryWord;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Pinned device memory mapped into this process ({@code gdr_map}): a native {@link MemorySegment} over the
 * GPU's BAR, covering every pinned GPU page ({@link GdrInfo#mappedSize()} bytes). Offsets are from the
 * segment's start, which is the device address {@link GdrInfo#va()}; the address that was pinned lies at
 * {@link #offset()} (0 for the GPU-page-aligned addresses {@link GdrCopy#pin} takes).
 *
 * <p>Loads and stores through {@link #segment()} reach device memory directly; a {@link MemoryWord} over it
 * ({@link #word32}, {@link #word64}) is a GPU-resident word the CPU can wait on with
 * {@link dev.gdasync.gdsync.memop.HostMemops}. The mapping is usually write-combined
 * ({@link GdrMappingType#WC}): stores are fast, loads cross PCIe one by one. Move bulk bytes with
 * {@link #copyTo} and {@link #copyFrom} ({@code gdr_copy_to_mapping} / {@code gdr_copy_from_mapping}), which
 * use the stores and loads that suit the mapping type.
 *
 * <p>{@link #close()} ({@link #unmap()}) invalidates the segment and every word over it first (they throw
 * {@link IllegalStateException} from then on), then calls {@code gdr_unmap}. Again does nothing.
 */
public final class GdrMapping implements AutoCloseable {
    private final GdrPin pin;
    private final long address;
    private final long size;
    private final long offset;
    private final GdrInfo info;
    private final Arena arena;
    private final MemorySegment segment;
    private volatile boolean unmapped;

    @SuppressWarnings("restricted") // the segment over the mapping gdr_map made: its size comes from GDRCopy
    GdrMapping(GdrPin pin, long address, long size, long offset, GdrInfo info) {
        this.pin = pin;
        this.address = address;
        this.size = size;
        this.offset = offset;
        this.info = info;
        // A shared arena: any thread may use the segment, and closing it waits out (or refuses while) accesses.
        this.arena = Arena.ofShared();
        this.segment = MemorySegment.ofAddress(address).reinterpret(size, arena, null);
    }

    /** @return the pinned buffer this maps */
    public GdrPin pin() {
        return pin;
    }

    /** @return the mapped bytes: every pinned GPU page, from device address {@link GdrInfo#va()} */
    public MemorySegment segment() {
        return segment;
    }

    /** @return the offset in {@link #segment()} of the address that was pinned */
    public long offset() {
        return offset;
    }

    /** @return the mapping's size in bytes ({@link GdrInfo#mappedSize()}) */
    public long byteSize() {
        return size;
    }

    /** @return the buffer's info right after it was mapped (mapping type, write combining) */
    public GdrInfo info() {
        return info;
    }

    /**
     * @param offsetInMapping an offset in {@link #segment()}
     * @return the device address of that byte
     */
    public long deviceAddressOf(long offsetInMapping) {
        Objects.checkIndex(offsetInMapping, size);
        return info.va() + offsetInMapping;
    }

    /**
     * A 32-bit word of device memory, read and written through the mapping.
     *
     * @param offsetInMapping the word's offset in {@link #segment()}, a multiple of 4
     * @param name            what the word is, for error messages
     * @return the word
     */
    public MemoryWord word32(long offsetInMapping, String name) {
        return MemoryWord.word32(segment, offsetInMapping, name);
    }

    /**
     * A 64-bit word of device memory, read and written through the mapping.
     *
     * @param offsetInMapping the word's offset in {@link #segment()}, a multiple of 8
     * @param name            what the word is, for error messages
     * @return the word
     */
    public MemoryWord word64(long offsetInMapping, String name) {
        return MemoryWord.word64(segment, offsetInMapping, name);
    }

    /**
     * Copies host bytes into device memory through the mapping ({@code gdr_copy_to_mapping}).
     *
     * @param offsetInMapping where the bytes go in {@link #segment()}
     * @param source          native memory holding the bytes; all of it is copied
     * @throws IllegalArgumentException  if the source is not native memory
     * @throws IndexOutOfBoundsException if the bytes do not fit in the mapping
     * @throws IllegalStateException     if the mapping is unmapped
     * @throws GdrException              if the library refuses
     */
    public void copyTo(long offsetInMapping, MemorySegment source) {
        MemorySegment target = slice("copy to", offsetInMapping, source);
        if (source.byteSize() > 0) {
            GdrException.check(pin.gdr().library.copyToMapping(pin.memoryHandle, target, source, source.byteSize()),
                    "gdr_copy_to_mapping(" + this + " + " + offsetInMapping + ", " + source.byteSize() + " bytes)");
        }
    }

    /**
     * Copies device bytes out through the mapping into host memory ({@code gdr_copy_from_mapping}).
     *
     * @param offsetInMapping where the bytes are in {@link #segment()}
     * @param destination     native memory to fill; all of it is filled
     * @throws IllegalArgumentException  if the destination is not native memory
     * @throws IndexOutOfBoundsException if the bytes are not all in the mapping
     * @throws IllegalStateException     if the mapping is unmapped
     * @throws GdrException              if the library refuses
     */
    public void copyFrom(long offsetInMapping, MemorySegment destination) {
        MemorySegment source = slice("copy from", offsetInMapping, destination);
        if (destination.byteSize() > 0) {
            GdrException.check(pin.gdr().library.copyFromMapping(pin.memoryHandle, destination, source,
                    destination.byteSize()), "gdr_copy_from_mapping(" + this + " + " + offsetInMapping + ", "
                    + destination.byteSize() + " bytes)");
        }
    }

    private MemorySegment slice(String what, long offsetInMapping, MemorySegment host) {
        Objects.requireNonNull(host, "host memory");
        if (!host.isNative()) {
            throw new IllegalArgumentException("cannot " + what + " " + this + " with a heap segment: GDRCopy copies "
                    + "between native memory and the mapping; use a segment from an Arena");
        }
        if (offsetInMapping < 0 || offsetInMapping > size || host.byteSize() > size - offsetInMapping) {
            throw new IndexOutOfBoundsException("cannot " + what + " " + this + " at offset " + offsetInMapping + ": "
                    + host.byteSize() + " bytes do not fit in its " + size + " bytes");
        }
        if (unmapped) {
            throw new IllegalStateException(this + " is unmapped");
        }
        return segment.asSlice(offsetInMapping, host.byteSize());
    }

    /** @return whether the mapping is still open */
    public boolean isMapped() {
        return !unmapped;
    }

    /** Same as {@link #close()}. */
    public void unmap() {
        close();
    }

    /**
     * Invalidates {@link #segment()} and the words over it, then unmaps ({@code gdr_unmap}). Again, or after
     * its pin or handle was closed, does nothing.
     *
     * @throws IllegalStateException if a copy on another thread is using the mapping; nothing changed then
     * @throws GdrException          if {@code gdr_unmap} fails (the mapping counts as unmapped nonetheless)
     */
    @Override
    public void close() {
        synchronized (pin.gdr().lock) {
            unmapLocked();
        }
    }

    /** Called with the handle's lock held. */
    void unmapLocked() {
        if (unmapped) {
            return;
        }
        try {
            arena.close();
        } catch (IllegalStateException e) {
            throw new IllegalStateException(this + " cannot be unmapped while a copy on another thread uses it: unmap "
                    + "it after the copy returns", e);
        }
        unmapped = true;
        pin.forget(this);
        GdrException.check(pin.gdr().library.unmap(pin.gdr().handle, pin.memoryHandle, MemorySegment.ofAddress(address),
                size), "gdr_unmap(" + this + ")");
    }

    @Override
    public String toString() {
        return "GDRCopy mapping of device 0x" + Long.toHexString(info.va()) + " (" + size + " bytes, "
                + info.mappingType() + ") at 0x" + Long.toHexString(address);
    }
}
