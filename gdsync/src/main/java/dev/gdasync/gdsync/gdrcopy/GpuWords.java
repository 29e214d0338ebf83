package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.gdsync.memop.MemoryWord;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Gives the CPU GPU-resident words it can wait on with {@link dev.gdasync.gdsync.memop.HostMemops}: a
 * completion flag or counter that a kernel or a stream memop writes into device memory.
 *
 * <p>With GDRCopy ({@link #usesGdrCopy()}), each word's GPU page is pinned and mapped once, shared by every
 * word in it, and the word is a {@link MemoryWord} over the mapping: the CPU reads device memory directly.
 * GDRCopy pins whole 64 KiB GPU pages, and a page that spans two allocations may fail to map: keep such
 * words in an allocation that covers their GPU pages (a 64 KiB aligned part of one {@code cuMemAlloc}).
 * Without it (no {@code libgdrapi}, no gdrdrv module, or {@value #GDRCOPY_PROPERTY}{@code =off}) the words
 * are host copies that one background thread refreshes with device-to-host copies through the CUDA driver
 * ({@link dev.gdasync.gdsync.cuda.CudaDeviceToHost}) every {@value #DEFAULT_COPY_INTERVAL_US} µs (see
 * {@value #COPY_INTERVAL_PROPERTY}); the first such fallback of the JVM prints why GDRCopy is not used,
 * once, on standard error.
 *
 * <p>{@link #close()} closes every word still open, stops the copier and closes the GDRCopy handle.
 */
public final class GpuWords implements AutoCloseable {
    /** System property: {@code auto} (the default) uses GDRCopy where it works, {@code off} never does. */
    public static final String GDRCOPY_PROPERTY = "gdasync.gdrcopy";
    /** System property: the fallback's refresh interval, in microseconds. */
    public static final String COPY_INTERVAL_PROPERTY = "gdasync.gpuwords.copy.interval.us";
    /** The fallback's default refresh interval, in microseconds. */
    public static final long DEFAULT_COPY_INTERVAL_US = 50;

    private static final AtomicBoolean FALLBACK_REPORTED = new AtomicBoolean();

    private final CudaContext context;
    private final GdrCopy gdr;
    private final String fallbackReason;
    private final long copyIntervalNanos;
    private final Map<Long, Page> pages = new HashMap<>();
    private final List<GpuWordMirror> words = new ArrayList<>();
    private GpuWordCopier copier;
    private boolean closed;

    /** One mapped GPU page and how many words use it. */
    static final class Page {
        final GdrPin pin;
        final GdrMapping mapping;
        int users;

        Page(GdrPin pin, GdrMapping mapping) {
            this.pin = pin;
            this.mapping = mapping;
        }
    }

    private GpuWords(CudaContext context, GdrCopy gdr, String fallbackReason, long copyIntervalNanos) {
        this.context = context;
        this.gdr = gdr;
        this.fallbackReason = fallbackReason;
        this.copyIntervalNanos = copyIntervalNanos;
    }

    /**
     * Opens GDRCopy if it can be used here, otherwise chooses the copying fallback and says why (the first
     * time in this JVM).
     *
     * @param context the context the words' device memory belongs to (the fallback copies in it)
     * @return the words' factory
     * @throws IllegalArgumentException if {@value #GDRCOPY_PROPERTY} or {@value #COPY_INTERVAL_PROPERTY} has
     *                                  a bad value
     */
    public static GpuWords open(CudaContext context) {
        Objects.requireNonNull(context, "context");
        long interval = copyIntervalNanos(System.getProperty(COPY_INTERVAL_PROPERTY));
        String reason = switchedOff(System.getProperty(GDRCOPY_PROPERTY));
        GdrCopy gdr = null;
        if (reason == null) {
            try {
                gdr = GdrCopy.open();
            } catch (GdrException e) {
                reason = e.getMessage();
            }
        }
        if (gdr == null && FALLBACK_REPORTED.compareAndSet(false, true)) {
            System.err.println("gdasync: GPU words are not mapped with GDRCopy: " + reason + "; the CPU reads them "
                    + "through device-to-host copies every " + TimeUnit.NANOSECONDS.toMicros(interval)
                    + " microseconds instead");
        }
        return new GpuWords(context, gdr, reason, interval);
    }

    /**
     * @param value the value of {@value #GDRCOPY_PROPERTY}, or null
     * @return why GDRCopy is not to be tried, or null to try it
     */
    static String switchedOff(String value) {
        if (value == null || value.isBlank() || value.trim().equals("auto")) {
            return null;
        }
        if (value.trim().equals("off")) {
            return "GDRCopy is switched off (-D" + GDRCOPY_PROPERTY + "=off)";
        }
        throw new IllegalArgumentException(GDRCOPY_PROPERTY + " must be auto or off, got '" + value + "'");
    }

    /**
     * @param value the value of {@value #COPY_INTERVAL_PROPERTY}, or null
     * @return the interval in nanoseconds
     */
    static long copyIntervalNanos(String value) {
        long us = DEFAULT_COPY_INTERVAL_US;
        if (value != null && !value.isBlank()) {
            try {
                us = Long.parseLong(value.trim());
            } catch (NumberFormatException e) {
                us = -1;
            }
            if (us <= 0 || us > TimeUnit.SECONDS.toMicros(1)) {
                throw new IllegalArgumentException(COPY_INTERVAL_PROPERTY + " must be a number of microseconds from 1 "
                        + "to 1000000, got '" + value + "'");
            }
        }
        return TimeUnit.MICROSECONDS.toNanos(us);
    }

    /** @return whether words are mapped with GDRCopy (else copied) */
    public boolean usesGdrCopy() {
        return gdr != null;
    }

    /** @return why words are copied instead of mapped, or empty when GDRCopy is used */
    public Optional<String> fallbackReason() {
        return Optional.ofNullable(fallbackReason);
    }

    /**
     * A 32-bit word of device memory.
     *
     * @param deviceAddress the word's device address, a multiple of 4 (memory from {@code cuMemAlloc})
     * @param name          what the word is, for error messages
     * @return the word as the CPU sees it
     * @throws IllegalArgumentException if the address is 0 or misaligned
     * @throws GdrException             if GDRCopy cannot pin or map the word's GPU page
     * @throws CudaException            if the fallback's first copy fails
     * @throws IllegalStateException    if this was closed
     */
    public GpuWordMirror word32(long deviceAddress, String name) {
        return word(deviceAddress, 4, name);
    }

    /**
     * A 64-bit word of device memory.
     *
     * @param deviceAddress the word's device address, a multiple of 8 (memory from {@code cuMemAlloc})
     * @param name          what the word is, for error messages
     * @return the word as the CPU sees it
     * @throws IllegalArgumentException if the address is 0 or misaligned
     * @throws GdrException             if GDRCopy cannot pin or map the word's GPU page
     * @throws CudaException            if the fallback's first copy fails
     * @throws IllegalStateException    if this was closed
     */
    public GpuWordMirror word64(long deviceAddress, String name) {
        return word(deviceAddress, 8, name);
    }

    private GpuWordMirror word(long deviceAddress, int width, String name) {
        Objects.requireNonNull(name, "name");
        if (deviceAddress == 0 || (deviceAddress & (width - 1)) != 0) {
            throw new IllegalArgumentException("GPU word '" + name + "' at device 0x" + Long.toHexString(deviceAddress)
                    + ": a " + (width * 8) + "-bit word needs a non-null device address aligned to " + width + " bytes");
        }
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("these GPU words are closed");
            }
            GpuWordMirror mirror = gdr != null ? mapped(deviceAddress, width, name) : copied(deviceAddress, width, name);
            words.add(mirror);
            return mirror;
        }
    }

    private GpuWordMirror mapped(long deviceAddress, int width, String name) {
        long base = deviceAddress & GdrCopy.GPU_PAGE_MASK;
        Page page = pages.get(base);
        if (page == null) {
            GdrPin pin = gdr.pin(base, GdrCopy.GPU_PAGE_SIZE);
            try {
                page = new Page(pin, pin.map());
            } catch (RuntimeException e) {
                pin.close();
                throw e;
            }
            pages.put(base, page);
        }
        long offset = page.mapping.offset() + (deviceAddress - base);
        MemoryWord word = width == 4 ? page.mapping.word32(offset, name) : page.mapping.word64(offset, name);
        page.users++;
        return new GpuWordMirror(this, deviceAddress, word, page, null);
    }

    private GpuWordMirror copied(long deviceAddress, int width, String name) {
        if (copier == null) {
            copier = new GpuWordCopier(context, copyIntervalNanos);
        }
        Arena hostCopy = Arena.ofShared();
        MemorySegment host = hostCopy.allocate(8, 8);
        MemoryWord word = width == 4 ? MemoryWord.word32(host, 0, name) : MemoryWord.word64(host, 0, name);
        GpuWordMirror mirror = new GpuWordMirror(this, deviceAddress, word, null, hostCopy);
        try {
            copier.copy(mirror);
        } catch (RuntimeException e) {
            hostCopy.close();
            throw e;
        }
        copier.add(mirror);
        return mirror;
    }

    /** Called by {@link GpuWordMirror#refresh()} for a copied word. */
    void refresh(GpuWordMirror mirror) {
        GpuWordCopier current;
        synchronized (this) {
            if (!words.contains(mirror)) {
                throw new IllegalStateException("GPU word " + mirror + " is closed");
            }
            current = copier;
        }
        current.copy(mirror);
    }

    /** Called by {@link GpuWordMirror#close()}: releases the word once. */
    void release(GpuWordMirror mirror) {
        synchronized (this) {
            if (!words.remove(mirror)) {
                return;
            }
            releaseLocked(mirror);
        }
    }

    private void releaseLocked(GpuWordMirror mirror) {
        if (mirror.page != null) {
            Page page = mirror.page;
            if (--page.users == 0) {
                pages.values().remove(page);
                page.pin.close(); // unmaps, then unpins
            }
        } else {
            copier.remove(mirror);
            mirror.hostCopy.close();
        }
    }

    /** @return how many GPU pages are mapped for the open words (0 for the fallback) */
    int mappedPages() {
        synchronized (this) {
            return pages.size();
        }
    }

    /**
     * Closes every word still open, stops the fallback's copier and closes the GDRCopy handle. Again does
     * nothing.
     *
     * @throws RuntimeException the first failure, after everything else was closed
     */
    @Override
    public void close() {
        GpuWordCopier stopping;
        RuntimeException first = null;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (int i = words.size() - 1; i >= 0; i--) {
                try {
                    releaseLocked(words.get(i));
                } catch (RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
            words.clear();
            stopping = copier;
        }
        if (stopping != null) {
            try {
                stopping.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (gdr != null) {
            try {
                gdr.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return gdr != null ? "GPU words mapped with " + gdr : "GPU words copied to the host (" + fallbackReason + ")";
    }
}
