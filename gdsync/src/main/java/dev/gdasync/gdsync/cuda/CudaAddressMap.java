package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.memop.MemoryWord;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;

/**
 * Names host memory for a GPU: a {@link DeviceAddressMap} that translates a memory word to the device
 * pointer of the registered host memory holding it.
 *
 * <p>The map keeps its registrations in a sorted set of disjoint, page-aligned host ranges. A word no
 * range holds makes the map register its whole segment ({@link MemoryWord#segment()}) on the spot,
 * rounded out to whole pages: CUDA pins whole pages, and two segments that share a page could otherwise
 * not both be registered. Where part of those pages is already registered, only the rest is. Memory that
 * something else in the process registered already ({@code CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED}) is
 * used through that registration and left alone on close.
 *
 * <p>Registered memory must stay allocated until the map is closed; {@link #close()} unregisters what the
 * map registered. Thread-safe.
 */
public final class CudaAddressMap implements DeviceAddressMap, AutoCloseable {
    private final Registrar registrar;
    private final long page;
    private final String owner;
    private final HostRanges ranges = new HostRanges();
    private boolean closed;

    /** Registers host ranges with a GPU: the seam that lets the map's bookkeeping be tested without one. */
    interface Registrar {
        /**
         * @param start the first byte (page-aligned)
         * @param bytes how many (whole pages)
         * @param io    whether it is I/O memory
         * @return the registration
         */
        HostRanges.Range register(long start, long bytes, boolean io);
    }

    /**
     * A map that registers host memory in a device's context.
     *
     * @param context the context kernels run in
     */
    public CudaAddressMap(CudaContext context) {
        this(new DriverRegistrar(Objects.requireNonNull(context, "context must not be null")), HostPages.size(),
                context.device().name() + " (device " + context.device().ordinal() + ")");
    }

    CudaAddressMap(Registrar registrar, long page, String owner) {
        if (page <= 0 || (page & (page - 1)) != 0) {
            throw new IllegalArgumentException("page size must be a power of two, got " + page);
        }
        this.registrar = registrar;
        this.page = page;
        this.owner = owner;
    }

    /**
     * @param word a word a kernel will load or store
     * @return its device address; the word's segment is registered first if no registration holds the word
     * @throws IllegalStateException if the map is closed
     * @throws CudaException         if the registration fails
     */
    @Override
    public synchronized long addressOf(MemoryWord word) {
        requireOpen();
        HostRanges.Range r = ranges.find(word.address(), word.width());
        if (r == null) {
            cover(word.segment().address(), word.segment().byteSize(), false);
            r = ranges.find(word.address(), word.width());
        }
        return word.address() + r.delta();
    }

    /**
     * @param segment native memory a kernel will use (a KI table, a copy buffer)
     * @return the device address of its first byte; registered first where no registration holds it
     * @throws IllegalArgumentException if the segment is empty or not native, or it spans registrations that
     *                                  the device does not see contiguously
     * @throws IllegalStateException    if the map is closed
     * @throws CudaException            if a registration fails
     */
    public synchronized long deviceAddressOf(MemorySegment segment) {
        requireOpen();
        requireNative(segment);
        cover(segment.address(), segment.byteSize(), false);
        List<HostRanges.Range> parts = ranges.intersecting(segment.address(), segment.address() + segment.byteSize());
        long delta = parts.getFirst().delta();
        for (HostRanges.Range r : parts) {
            if (r.delta() != delta) {
                throw new IllegalArgumentException("the segment at 0x" + Long.toHexString(segment.address()) + " ("
                        + segment.byteSize() + " bytes) spans CUDA registrations that " + owner + " does not see "
                        + "contiguously (" + parts + "): register it first with register(segment), before memory "
                        + "around it");
            }
        }
        return segment.address() + delta;
    }

    /**
     * Registers a segment ahead of use (whole pages), where no registration holds it yet.
     *
     * @param segment native memory
     * @throws IllegalArgumentException if the segment is empty or not native
     * @throws CudaException            if the registration fails
     */
    public synchronized void register(MemorySegment segment) {
        requireOpen();
        requireNative(segment);
        cover(segment.address(), segment.byteSize(), false);
    }

    /**
     * Registers a device's I/O memory, such as a NIC's doorbell page, with IOMEMORY, so that kernels can
     * store to it.
     *
     * @param segment the mapped I/O memory
     * @throws IllegalArgumentException if part of its pages is already registered
     * @throws CudaException            if the driver refuses (IOMEMORY needs GPUDirect RDMA support)
     */
    public synchronized void registerIo(MemorySegment segment) {
        requireOpen();
        requireNative(segment);
        long start = HostPages.floor(segment.address(), page);
        long end = HostPages.ceil(segment.address() + segment.byteSize(), page);
        List<HostRanges.Range> overlap = ranges.intersecting(start, end);
        if (!overlap.isEmpty()) {
            throw new IllegalArgumentException("cannot register [0x" + Long.toHexString(start) + ", 0x"
                    + Long.toHexString(end) + ") as I/O memory: it overlaps " + overlap);
        }
        ranges.add(registrar.register(start, end - start, true));
    }

    /**
     * Unregisters the ranges this map registered that lie entirely within the pages wholly inside the segment (memory
     * about to be freed, after the last kernel that used it ended; a whole allocation such as {@code Mp.allocate}'s is
     * page-aligned): an address reused by a later allocation is then registered anew. Ranges that reach beyond those
     * pages (registered for memory around it, or on a page the segment shares) and ranges registered elsewhere stay as
     * they are; a closed map, or memory it never translated, is left alone.
     *
     * @param segment native memory this map may have translated
     * @throws NullPointerException if the segment is null
     * @throws CudaException        if the driver refuses to unregister a range (it is forgotten all the same)
     */
    @Override
    public void forget(MemorySegment segment) {
        Objects.requireNonNull(segment, "segment must not be null");
        List<HostRanges.Range> gone;
        synchronized (this) {
            if (closed || !segment.isNative() || segment.byteSize() == 0) {
                return;
            }
            gone = ranges.removeWithin(HostPages.ceil(segment.address(), page),
                    HostPages.floor(segment.address() + segment.byteSize(), page));
        }
        releaseAll(gone);
    }

    /** @return how many host ranges the map holds */
    public synchronized int rangeCount() {
        return ranges.size();
    }

    /** Unregisters every range the map registered; later translations fail. */
    @Override
    public void close() {
        List<HostRanges.Range> all;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = ranges.removeAll();
        }
        releaseAll(all);
    }

    /** Unregisters the owned ranges, last first; the first failure is thrown after trying all. */
    private static void releaseAll(List<HostRanges.Range> all) {
        RuntimeException first = null;
        for (HostRanges.Range r : all.reversed()) {
            if (!r.owned()) {
                continue;
            }
            try {
                r.release().run();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private void cover(long address, long bytes, boolean io) {
        long start = HostPages.floor(address, page);
        long end = HostPages.ceil(address + bytes, page);
        for (long[] gap : ranges.gaps(start, end)) {
            ranges.add(registrar.register(gap[0], gap[1] - gap[0], io));
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the CUDA address map of " + owner + " is closed");
        }
    }

    private static void requireNative(MemorySegment segment) {
        if (!segment.isNative() || segment.byteSize() == 0) {
            throw new IllegalArgumentException("a GPU can use non-empty native memory only, got " + segment);
        }
    }

    @Override
    public synchronized String toString() {
        return "CUDA address map of " + owner + " " + ranges.ranges();
    }

    /** Registers through the driver; uses registrations made elsewhere in the process when it finds them. */
    private record DriverRegistrar(CudaContext context) implements Registrar {
        @Override
        public HostRanges.Range register(long start, long bytes, boolean io) {
            try {
                CudaHostMemory m = io ? CudaHostMemory.registerIo(context, start, bytes)
                        : CudaHostMemory.register(context, start, bytes);
                return new HostRanges.Range(start, start + bytes, m.deviceAddress(), io, true, m::close);
            } catch (CudaException e) {
                if (e.result() != CudaResults.HOST_MEMORY_ALREADY_REGISTERED) {
                    throw e;
                }
                long first = devicePointer(start);
                long last = devicePointer(start + bytes - 1);
                if (first == 0 || last - first != bytes - 1) {
                    throw new CudaException(e.getMessage() + "; the memory at 0x" + Long.toHexString(start) + " ("
                            + bytes + " bytes) is registered elsewhere in this process, but not as one range this map "
                            + "can use: register it through this map first", e.result());
                }
                return new HostRanges.Range(start, start + bytes, first, io, false, () -> { });
            }
        }

        private long devicePointer(long host) {
            CUdeviceptr out = CudaPointers.deviceOut();
            int rc = JCudaDriver.cuMemHostGetDevicePointer(out, CudaPointers.host(host), 0);
            return rc == CudaResults.SUCCESS ? CudaPointers.address(out) : 0;
        }
    }
}
