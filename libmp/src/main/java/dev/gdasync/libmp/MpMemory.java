package dev.gdasync.libmp;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Nic;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An Mp's memory: what it allocated from its NIC (host shared memory, GPU memory) and the registrations over it. The
 * bodies of {@code Mp.allocate}, {@code free}, {@code allocationOf}, {@code register}, {@code allocateDevice} and
 * {@code deregister}, whose contracts (and Javadoc) are the facade's; the windows register their buffers here too.
 */
final class MpMemory {
    private final MpContext context;
    private final Nic nic;
    private final List<Region> regions = new ArrayList<>();
    private final List<Region> deviceRegions = new CopyOnWriteArrayList<>();

    MpMemory(MpContext context, Nic nic) {
        this.context = context;
        this.nic = nic;
    }

    MemorySegment allocate(long bytes) {
        context.requireOpen();
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be > 0, got " + bytes);
        }
        Region r = nic.allocateHost(bytes);
        if (r.length() != bytes) {
            r.close();
            throw new IllegalStateException(nic.name() + " allocated " + r.length() + " bytes when asked for " + bytes
                    + ": a NIC's allocateHost returns exactly the length asked");
        }
        regions.add(r);
        return r.segment();
    }

    void free(MemorySegment memory) {
        Objects.requireNonNull(memory, "memory must not be null");
        context.requireOpen();
        Region partOf = null;
        for (Region r : regions) {
            if (!r.isOpen()) {
                continue;
            }
            if (r.address() == memory.address() && r.length() == memory.byteSize()) {
                regions.remove(r);
                r.close();
                return;
            }
            if (liesIn(memory, r)) {
                partOf = r;
            }
        }
        if (partOf != null) {
            throw new IllegalArgumentException("memory at 0x" + Long.toHexString(memory.address()) + " (" + memory.byteSize()
                    + " bytes) is only a part of an allocation of " + partOf.length() + " bytes at 0x"
                    + Long.toHexString(partOf.address()) + ": free the whole segment allocate() returned (allocationOf gives it)");
        }
        throw new IllegalArgumentException("memory at 0x" + Long.toHexString(memory.address()) + " (" + memory.byteSize()
                + " bytes) was not allocated by this Mp, or was freed already");
    }

    MemorySegment allocationOf(MemorySegment memory) {
        Objects.requireNonNull(memory, "memory must not be null");
        context.requireOpen();
        for (Region r : regions) {
            if (r.isOpen() && liesIn(memory, r)) {
                return r.segment();
            }
        }
        throw new IllegalArgumentException("memory at 0x" + Long.toHexString(memory.address()) + " (" + memory.byteSize()
                + " bytes) is not inside memory from Mp.allocate()");
    }

    MpRegistration register(MemorySegment memory) {
        Objects.requireNonNull(memory, "memory must not be null");
        context.requireOpen();
        if (memory.byteSize() == 0) {
            throw new IllegalArgumentException("memory at 0x" + Long.toHexString(memory.address())
                    + " has 0 bytes: zero-byte registrations are refused (register at least one byte)");
        }
        if (!memory.isNative()) {
            throw new IllegalArgumentException("memory is a heap segment (" + memory
                    + "): only memory from Mp.allocate() can be registered");
        }
        for (Region r : regions) {
            if (r.isOpen() && liesIn(memory, r)) {
                return new MpRegistration(context, nic.register(r, memory.address() - r.address(), memory.byteSize(), Access.ALL));
            }
        }
        throw new IllegalArgumentException("memory at 0x" + Long.toHexString(memory.address()) + " (" + memory.byteSize()
                + " bytes) is not inside memory from Mp.allocate(): the shared-memory NIC registers only its own regions");
    }

    /** Whether a native segment lies inside a region: [address, address + size) within the region's bytes. */
    private static boolean liesIn(MemorySegment memory, Region r) {
        long offset = memory.address() - r.address();
        return memory.isNative() && offset >= 0 && memory.byteSize() <= r.length() && offset <= r.length() - memory.byteSize();
    }

    Region allocateDevice(int device, long bytes) {
        context.requireOpen();
        Region r = nic.allocateDevice(device, bytes);
        deviceRegions.add(r);
        return r;
    }

    void free(Region memory) {
        Objects.requireNonNull(memory, "memory must not be null");
        context.requireOpen();
        if (!deviceRegions.remove(memory)) {
            throw new IllegalArgumentException(memory + " was not allocated by this Mp, or was freed");
        }
        memory.close();
    }

    MpRegistration register(Region memory) {
        Objects.requireNonNull(memory, "memory must not be null");
        context.requireOpen();
        if (!deviceRegions.contains(memory) || !memory.isOpen()) {
            throw new IllegalArgumentException(memory + " is not GPU memory from this Mp's allocateDevice(), or was freed");
        }
        return new MpRegistration(context, nic.register(memory, Access.ALL));
    }

    void deregister(MpRegistration reg) {
        Objects.requireNonNull(reg, "reg must not be null");
        context.requireOpen();
        reg.checkOwner(context);
        if (!reg.isValid()) {
            throw new IllegalArgumentException(reg + " is already deregistered");
        }
        reg.release();
        nic.deregister(reg.region);
    }
}
