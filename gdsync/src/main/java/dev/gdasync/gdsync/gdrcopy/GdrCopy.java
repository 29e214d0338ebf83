package dev.gdasync.gdsync.gdrcopy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * An open GDRCopy library handle ({@code gdr_t}): pins GPU memory and maps it into this process through the
 * GPU's BAR, so the CPU reads and writes device memory with plain loads and stores.
 *
 * <p>Nothing native happens before the first call of {@link #open()} or {@link #unavailableReason()}: then
 * {@code libgdrapi.so.2} (or {@code libgdrapi.so}) is looked up and bound with FFM once per JVM. A machine
 * without it gets a {@link GdrException} whose message says what is missing, never a linkage error.
 *
 * <p>Lifecycle: {@link #pin} gives a {@link GdrPin}, whose {@link GdrPin#map()} gives a {@link GdrMapping}.
 * Each is {@link AutoCloseable}; closing is idempotent and may happen in any order: closing a pin unmaps its
 * mapping first, closing this handle unmaps and unpins everything still open, and closing something already
 * closed (directly or by such a cascade) does nothing. Segments of a closed mapping throw
 * {@link IllegalStateException} on access instead of touching unmapped memory.
 *
 * <p>Threads: GDRCopy's library is not thread-safe, so pinning, mapping, queries and closing are serialized
 * on this handle. Copies ({@link GdrMapping#copyTo}, {@link GdrMapping#copyFrom}) and accesses through a
 * mapping's segment run concurrently.
 */
public final class GdrCopy implements AutoCloseable {
    /** {@code GPU_PAGE_SHIFT}: GPU pages are 64 KiB. */
    public static final int GPU_PAGE_SHIFT = 16;
    /** {@code GPU_PAGE_SIZE}: the unit GDRCopy pins and maps; a mapped address must be aligned to it. */
    public static final long GPU_PAGE_SIZE = 1L << GPU_PAGE_SHIFT;
    /** {@code GPU_PAGE_OFFSET}: the bits of an address inside its GPU page. */
    public static final long GPU_PAGE_OFFSET = GPU_PAGE_SIZE - 1;
    /** {@code GPU_PAGE_MASK}: clears the bits inside the GPU page. */
    public static final long GPU_PAGE_MASK = ~GPU_PAGE_OFFSET;

    /** The character device of the gdrdrv kernel module, which {@code gdr_open} opens. */
    static final Path DEVICE_FILE = Path.of("/dev/gdrdrv");

    final Object lock = new Object();
    final GdrLibrary library;
    final MemorySegment handle;
    private final List<GdrPin> pins = new ArrayList<>();
    private boolean closed;

    private GdrCopy(GdrLibrary library, MemorySegment handle) {
        this.library = library;
        this.handle = handle;
    }

    /**
     * Tells whether GDRCopy can be used here, without throwing: the library is loaded and checked (once per
     * JVM), then a handle is opened and closed again, which needs the gdrdrv kernel module.
     *
     * @return why {@link #open()} fails, or empty when it succeeds
     */
    public static Optional<String> unavailableReason() {
        Optional<String> problem = GdrLibrary.problem();
        if (problem.isPresent()) {
            return problem;
        }
        try {
            open().close();
            return Optional.empty();
        } catch (GdrException e) {
            return Optional.of(e.getMessage());
        }
    }

    /**
     * Opens a GDRCopy handle ({@code gdr_open}).
     *
     * @return the handle
     * @throws GdrException if the library is missing or unusable, or {@code gdr_open} fails (the gdrdrv
     *                      kernel module is not loaded, or cannot be opened); the message says what to do
     */
    public static GdrCopy open() {
        GdrLibrary library = GdrLibrary.get();
        MemorySegment handle = library.open();
        if (handle.address() == 0) {
            throw new GdrException(openFailure(Files.exists(DEVICE_FILE), Files.isReadable(DEVICE_FILE)
                    && Files.isWritable(DEVICE_FILE)), GdrException.NO_RESULT);
        }
        return new GdrCopy(library, handle);
    }

    /**
     * @param deviceExists     whether {@code /dev/gdrdrv} exists
     * @param deviceAccessible whether this user may open it for reading and writing
     * @return why {@code gdr_open} returned NULL, as far as can be told from outside
     */
    static String openFailure(boolean deviceExists, boolean deviceAccessible) {
        String prefix = "gdr_open returned NULL: ";
        if (!deviceExists) {
            return prefix + "the gdrdrv kernel module is not loaded (" + DEVICE_FILE + " does not exist), and there is "
                    + "no dma-buf mapping to fall back to (GDRCopy 2.6 or newer with CUDA driver 13.3 or newer): load "
                    + "gdrdrv (GDRCopy's insmod.sh, or 'modprobe gdrdrv' where its DKMS package is installed)";
        }
        if (!deviceAccessible) {
            return prefix + DEVICE_FILE + " exists but this user cannot open it for reading and writing: check its "
                    + "permissions (gdrdrv's dbg_enable/permission module parameters, or a udev rule)";
        }
        return prefix + DEVICE_FILE + " exists, yet libgdrapi could not use it: gdrdrv and libgdrapi may be "
                + "incompatible versions (gdrdrv must be 2.0 or newer); " + GdrResults.LOGGING_HINT;
    }

    /**
     * Checks a range before it is pinned; nothing native happens.
     *
     * @param deviceAddress the first byte
     * @param size          how many bytes
     * @throws IllegalArgumentException if the address is 0 or not GPU-page aligned, the size is not
     *                                  positive, or the range wraps around
     */
    static void checkPin(long deviceAddress, long size) {
        String range = "0x" + Long.toHexString(deviceAddress) + " (" + size + " bytes)";
        if (deviceAddress == 0) {
            throw new IllegalArgumentException("cannot pin " + range + ": the device address is 0 (NULL)");
        }
        if ((deviceAddress & GPU_PAGE_OFFSET) != 0) {
            throw new IllegalArgumentException("cannot pin " + range + ": gdr_map needs a pinned address aligned to "
                    + "the GPU page of " + GPU_PAGE_SIZE + " bytes, and this one is " + (deviceAddress & GPU_PAGE_OFFSET)
                    + " bytes past the page at 0x" + Long.toHexString(deviceAddress & GPU_PAGE_MASK)
                    + "; pin from that page, or allocate with GPU-page alignment");
        }
        if (size <= 0) {
            throw new IllegalArgumentException("cannot pin " + range + ": the size must be positive");
        }
        if (size > Long.MAX_VALUE - GPU_PAGE_OFFSET
                || Long.compareUnsigned(deviceAddress + ((size + GPU_PAGE_OFFSET) & GPU_PAGE_MASK), deviceAddress) <= 0) {
            throw new IllegalArgumentException("cannot pin " + range + ": the range, rounded up to whole GPU pages, "
                    + "wraps around the address space");
        }
    }

    /** @return the library's file name as it was found: {@code libgdrapi.so.2} or {@code libgdrapi.so} */
    public String libraryName() {
        return library.name;
    }

    /** @return the user library's version ({@code gdr_runtime_get_version}) */
    public GdrVersion runtimeVersion() {
        return library.runtimeVersion();
    }

    /**
     * @return the gdrdrv kernel module's version ({@code gdr_driver_get_version})
     * @throws GdrException          if the module does not answer
     * @throws IllegalStateException if this handle is closed
     */
    public GdrVersion driverVersion() {
        synchronized (lock) {
            checkOpen();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment version = arena.allocate(JAVA_INT, 2);
                GdrException.check(library.driverGetVersion(handle, version), "gdr_driver_get_version");
                return new GdrVersion(version.getAtIndex(JAVA_INT, 0), version.getAtIndex(JAVA_INT, 1));
            }
        }
    }

    /**
     * Pins device memory for mapping ({@code gdr_pin_buffer}). GDRCopy pins whole GPU pages: the last page is
     * pinned whole even when {@code size} ends inside it, and a mapping covers all of them.
     *
     * @param deviceAddress the first byte: device memory from {@code cuMemAlloc} or {@code cudaMalloc},
     *                      aligned to {@link #GPU_PAGE_SIZE}
     * @param size          how many bytes, positive
     * @return the pinned buffer
     * @throws IllegalArgumentException if the address is 0 or unaligned, or the size is not positive;
     *                                  nothing is pinned then
     * @throws GdrException             if the library refuses (not device memory, out of BAR1 space, ...)
     * @throws IllegalStateException    if this handle is closed
     */
    public GdrPin pin(long deviceAddress, long size) {
        checkPin(deviceAddress, size);
        synchronized (lock) {
            checkOpen();
            MemorySegment memoryHandle = Arena.ofAuto().allocate(GdrLibrary.MEMORY_HANDLE);
            GdrException.check(library.pinBuffer(handle, deviceAddress, size, memoryHandle),
                    "gdr_pin_buffer(0x" + Long.toHexString(deviceAddress) + ", " + size + " bytes)");
            GdrPin pin = new GdrPin(this, deviceAddress, size, memoryHandle);
            pins.add(pin);
            return pin;
        }
    }

    /**
     * Copies host bytes into a mapping ({@code gdr_copy_to_mapping}): the way to move bulk bytes through a
     * write-combined mapping. Same as {@link GdrMapping#copyTo(long, MemorySegment)}.
     *
     * @param mapping a mapping made through this handle
     * @param offset  the first byte in the mapping's segment
     * @param source  native memory holding the bytes
     * @throws IllegalArgumentException if the mapping belongs to another handle
     */
    public void copyTo(GdrMapping mapping, long offset, MemorySegment source) {
        requireOwn(mapping);
        mapping.copyTo(offset, source);
    }

    /**
     * Copies bytes out of a mapping into host memory ({@code gdr_copy_from_mapping}). Same as
     * {@link GdrMapping#copyFrom(long, MemorySegment)}.
     *
     * @param mapping     a mapping made through this handle
     * @param offset      the first byte in the mapping's segment
     * @param destination native memory to fill
     * @throws IllegalArgumentException if the mapping belongs to another handle
     */
    public void copyFrom(GdrMapping mapping, long offset, MemorySegment destination) {
        requireOwn(mapping);
        mapping.copyFrom(offset, destination);
    }

    private void requireOwn(GdrMapping mapping) {
        if (mapping.pin().gdr() != this) {
            throw new IllegalArgumentException(mapping + " was made through another GDRCopy handle");
        }
    }

    /** @return whether this handle is still open */
    public boolean isOpen() {
        synchronized (lock) {
            return !closed;
        }
    }

    /** @return how many pins are open */
    public int pinCount() {
        synchronized (lock) {
            return pins.size();
        }
    }

    /**
     * Unmaps and unpins everything still open, newest first, then closes the handle ({@code gdr_close}).
     * Closing again does nothing.
     *
     * <p>A mapping that a copy on another thread is using cannot be unmapped (GDRCopy would tear the pages
     * down under the copy): then this throws, and the handle stays open with whatever was not released yet,
     * so that it can be closed again once the copy has returned.
     *
     * @throws IllegalStateException if a mapping is in use by a copy on another thread
     * @throws GdrException          if a call failed; everything else is closed nonetheless
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            GdrException failed = null;
            for (int i = pins.size() - 1; i >= 0; i--) {
                try {
                    pins.get(i).unpinLocked(); // an IllegalStateException (mapping in use) leaves the handle open
                } catch (GdrException e) {
                    failed = failed == null ? e : failed;
                }
            }
            closed = true;
            int result = library.close(handle);
            if (failed != null) {
                throw failed;
            }
            GdrException.check(result, "gdr_close");
        }
    }

    /** Called with {@link #lock} held, by a pin that was unpinned. */
    void forget(GdrPin pin) {
        pins.remove(pin);
    }

    /** Called with {@link #lock} held. */
    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the GDRCopy handle (" + library.name + ") is closed");
        }
    }

    @Override
    public String toString() {
        return "GDRCopy " + library.runtimeVersion() + " (" + library.name + ")";
    }
}
