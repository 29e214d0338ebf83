package dev.gdasync.gdsync.swnic.shm;

import dev.gdasync.gdsync.concurrent.Futex;
import dev.gdasync.gdsync.memory.ProcessLiveness;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.swnic.core.DeviceMemory;
import dev.gdasync.gdsync.swnic.core.KeyedRange;
import dev.gdasync.gdsync.swnic.core.Layouts;
import dev.gdasync.gdsync.swnic.core.NicCore;
import dev.gdasync.gdsync.swnic.cudaipc.DeviceHandleFile;
import dev.gdasync.gdsync.swnic.cudaipc.DeviceSupport;
import dev.gdasync.gdsync.swnic.cudaipc.LocalDeviceRegions;
import dev.gdasync.gdsync.swnic.cudaipc.NicDevices;
import dev.gdasync.gdsync.swnic.cudaipc.PeerDeviceMapping;

import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A peer process as this process sees it: its node file (mapped read-only), the region files it
 * registered (mapped on first use), its device regions (mapped through CUDA IPC on first use), and
 * whether it is still alive.
 *
 * <p>Key checks read the peer's MR table on every access, so a deregistration takes effect at once;
 * what a key resolved to is cached per table slot, and the cache is only used while the key in the
 * table is still the same key.
 *
 * <p>Device regions are a registration cache: a region is opened ({@code cuIpcOpenMemHandle}) once, by
 * region id, and stays mapped for every key of it until the owner begins to free it (seen at the next
 * {@link #sweepDeviceMappings() sweep}), the peer goes away, or the last queue pair to the peer closes.
 * A region the owner runs in this process is used as it is, without IPC.
 */
final class PeerNode {
    /** What a key resolves to when it names device memory that cannot be mapped here. */
    static final ResolvedMr UNREACHABLE = new ResolvedMr(0, 0, 0, -1, 0, null, 0, 0, DeviceMemory.UNREACHABLE);

    private final NicCore nic;
    private final NicDevices devices;
    private final Path directory;
    private final long pid;
    private final long startMillis;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment node;
    /** The peer's wake file ({@link Layouts.Wake}), mapped writable; null if the peer has none. */
    private final MemorySegment wake;
    private final int mrCapacity;
    private final ResolvedMr[] resolved;
    private final ConcurrentHashMap<Long, MemorySegment> regions = new ConcurrentHashMap<>();
    /** Device regions by id, guarded by this; {@link DeviceMemory#UNREACHABLE} once mapping one failed. */
    private final Map<Long, DeviceMemory> deviceRegions = new HashMap<>();
    private volatile boolean hasPeerMappings;
    private volatile ErrorDetail gone;
    private int references;
    private boolean released;
    private final ProcessHandle handle;
    private int checks;
    private static final int START_TIME_CHECK_EVERY = 50;

    /**
     * What a key resolved to: the MR's bounds and access, and either the mapping of its region file (host
     * memory) or the device memory and its base address here ({@code device} not null).
     */
    record ResolvedMr(long lkey, long rkey, long address, long length, int access, MemorySegment region,
                      long regionOffset, long deviceBase, DeviceMemory device) implements KeyedRange {
        @Override
        public MemorySegment hostMemory() {
            return region;
        }

        @Override
        public long hostOffset(long addr) {
            return regionOffset + (addr - address);
        }

        /** @return the device address here of the MR's byte at {@code addr}; device memory only */
        @Override
        public long deviceAddress(long addr) {
            return deviceBase + hostOffset(addr);
        }
    }

    PeerNode(NicCore nic, NicDevices devices, Path directory, long pid, long startMillis) {
        this.nic = nic;
        this.devices = devices;
        this.directory = directory;
        this.pid = pid;
        this.startMillis = startMillis;
        try {
            this.node = ShmDirectory.mapExisting(directory.resolve("node"), false, arena);
        } catch (UncheckedIOException e) {
            arena.close();
            throw new IllegalArgumentException("cannot reach the peer at " + directory + ": its node file is missing"
                    + " (the peer closed, or it runs on another host)", e);
        }
        try {
            if (node.byteSize() < Layouts.PAGE || node.get(JAVA_LONG, Layouts.Node.OFF_MAGIC) != Layouts.Node.MAGIC) {
                throw new IllegalArgumentException("peer node file " + directory.resolve("node") + " is not a gdasync node file");
            }
            int version = node.get(JAVA_INT, Layouts.Node.OFF_VERSION);
            if (version != Layouts.VERSION) {
                throw new IllegalArgumentException("peer at " + directory + " speaks shared-memory format " + version
                        + ", this process speaks " + Layouts.VERSION);
            }
            if (node.get(JAVA_LONG, Layouts.Node.OFF_PID) != pid) {
                throw new IllegalArgumentException("peer node file " + directory + " belongs to pid "
                        + node.get(JAVA_LONG, Layouts.Node.OFF_PID) + ", the endpoint names pid " + pid);
            }
            this.mrCapacity = node.get(JAVA_INT, Layouts.Node.OFF_MR_CAPACITY);
            if (node.byteSize() < Layouts.Node.size(mrCapacity)) {
                throw new IllegalArgumentException("peer node file " + directory + " is truncated");
            }
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.resolved = new ResolvedMr[mrCapacity];
        this.handle = ShmDirectory.isAlive(pid, startMillis) ? ProcessHandle.of(pid).orElse(null) : null;
        this.wake = mapWake(directory.resolve("wake"), arena);
    }

    private static MemorySegment mapWake(Path file, Arena arena) {
        try {
            MemorySegment w = ShmDirectory.mapExisting(file, true, arena);
            return w.byteSize() >= Layouts.Wake.SIZE ? w : null;
        } catch (UncheckedIOException e) {
            return null; // a peer without a wake file: its waiters park for their time, as before
        }
    }

    /**
     * After a request completed into the peer (a CQE it polls, memory it waits on): wakes the peer's threads parked
     * waiting for their peers, if any. The full fence orders the completion's stores before the look at the sleeper
     * count, as the sleeper's count increment is ordered before its last look at what it waits for: one of the two
     * sees the other. Costs a fence and a load while nobody sleeps.
     */
    void wakeSleepers() {
        MemorySegment w = wake;
        if (w == null) {
            return;
        }
        VarHandle.fullFence();
        if ((int) INT.getVolatile(w, Layouts.Wake.OFF_SLEEPERS) > 0) {
            INT.getAndAdd(w, Layouts.Wake.OFF_SEQ, 1);
            Futex.wakeAll(w, Layouts.Wake.OFF_SEQ);
        }
    }

    Path directory() {
        return directory;
    }

    long pid() {
        return pid;
    }

    Arena arena() {
        return arena;
    }

    /** @return why the peer is gone, or null while it is alive */
    ErrorDetail gone() {
        return gone;
    }

    /**
     * Checks whether the peer closed or died; once gone it stays gone.
     *
     * @return why it is gone, or null if alive
     */
    synchronized ErrorDetail checkLiveness() {
        ErrorDetail g = gone;
        if (g != null || released) {
            return g;
        }
        if ((int) INT.getAcquire(node, Layouts.Node.OFF_STATE) == Layouts.Node.STATE_CLOSED) {
            g = ErrorDetail.PEER_CLOSED;
        } else if (handle == null || !ProcessLiveness.isRunning(handle)) {
            g = ErrorDetail.PEER_DEAD;
        } else if (++checks % START_TIME_CHECK_EVERY == 0 && !ShmDirectory.isAlive(pid, startMillis)) {
            // The start time (a /proc read) catches a pid reused by another process; rarely needed.
            g = ErrorDetail.PEER_DEAD;
        }
        if (g != null) {
            gone = g;
            closeDeviceMappings();
            if (g == ErrorDetail.PEER_DEAD) {
                // Its shared memory would stay until some process opens a NIC: remove it now. Mappings of it, ours
                // included, stay valid until they are unmapped; the memory is freed then.
                ShmDirectory.removeDeadProcess(directory, pid, startMillis);
            }
        }
        return g;
    }

    /**
     * Resolves an rkey the peer handed out.
     *
     * @param rkey the key
     * @return the registration, or null if no live registration has that rkey
     */
    ResolvedMr resolveRkey(long rkey) {
        return resolve(rkey, Layouts.Mr.OFF_RKEY);
    }

    /**
     * Resolves an lkey of the peer (its posted receive buffers).
     *
     * @param lkey the key
     * @return the registration, or null if no live registration has that lkey
     */
    ResolvedMr resolveLkey(long lkey) {
        return resolve(lkey, Layouts.Mr.OFF_LKEY);
    }

    private ResolvedMr resolve(long key, long keyOffset) {
        int slot = (int) (key & Layouts.Mr.SLOT_MASK);
        if (key == 0 || slot >= mrCapacity) {
            return null;
        }
        long e = Layouts.Node.MR_TABLE + slot * Layouts.Mr.SIZE;
        if ((long) LONG.getAcquire(node, e + keyOffset) != key) {
            return null;
        }
        ResolvedMr cached = resolved[slot];
        if (cached != null && (keyOffset == Layouts.Mr.OFF_RKEY ? cached.rkey() : cached.lkey()) == key) {
            return cached;
        }
        long lkey = (long) LONG.getAcquire(node, e + Layouts.Mr.OFF_LKEY);
        long rkey = (long) LONG.getAcquire(node, e + Layouts.Mr.OFF_RKEY);
        long address = node.get(JAVA_LONG, e + Layouts.Mr.OFF_ADDRESS);
        long length = node.get(JAVA_LONG, e + Layouts.Mr.OFF_LENGTH);
        long regionId = node.get(JAVA_LONG, e + Layouts.Mr.OFF_REGION_ID);
        long regionOffset = node.get(JAVA_LONG, e + Layouts.Mr.OFF_REGION_OFFSET);
        int access = node.get(JAVA_INT, e + Layouts.Mr.OFF_ACCESS);
        int kind = node.get(JAVA_INT, e + Layouts.Mr.OFF_KIND);
        VarHandle.acquireFence();
        if ((long) LONG.getAcquire(node, e + keyOffset) != key) {
            return null; // deregistered while we read
        }
        ResolvedMr r;
        if (kind == Layouts.Mr.KIND_DEVICE) {
            DeviceMemory device = deviceRegion(regionId);
            if (device == DeviceMemory.UNREACHABLE) {
                return UNREACHABLE;
            }
            if (device == null || regionOffset < 0 || length < 0 || regionOffset > device.length() - length) {
                return null;
            }
            r = new ResolvedMr(lkey, rkey, address, length, access, null, regionOffset, device.base(), device);
        } else {
            MemorySegment region = region(regionId);
            if (region == null || regionOffset < 0 || length < 0 || regionOffset > region.byteSize() - length) {
                return null;
            }
            r = new ResolvedMr(lkey, rkey, address, length, access, region, regionOffset, 0, null);
        }
        resolved[slot] = r;
        return r;
    }

    /**
     * The peer's device region {@code id}, mapped on first use.
     *
     * @return the memory, null if the region is gone (freed, or the peer is gone), or
     * {@link DeviceMemory#UNREACHABLE} if it cannot be mapped here
     */
    private synchronized DeviceMemory deviceRegion(long id) {
        if (gone != null || released) {
            return null;
        }
        DeviceMemory d = deviceRegions.get(id);
        if (d != null) {
            return d;
        }
        if (pid == ProcessHandle.current().pid()) {
            LocalDeviceRegions.Entry local = LocalDeviceRegions.find(directory, id);
            if (local == null) {
                return null;
            }
            try {
                devices.bindForPeer(local.device());
            } catch (RuntimeException e) {
                return unreachable(id, e.getMessage());
            }
            deviceRegions.put(id, local.memory());
            return local.memory();
        }
        MemorySegment file = DeviceHandleFile.open(directory, id, arena);
        if (file == null) {
            return null;
        }
        int handleResult = DeviceHandleFile.handleResult(file);
        if (handleResult != 0) {
            return unreachable(id, "the owner could not export it (cuIpcGetMemHandle failed with result " + handleResult + ")");
        }
        int slot = DeviceHandleFile.claim(file, ProcessHandle.current().pid(), nic.startMillis());
        if (slot == DeviceHandleFile.CLOSING) {
            return null;
        }
        if (slot == DeviceHandleFile.FULL) {
            return unreachable(id, "all " + Layouts.Device.SLOT_COUNT + " importer slots of its handle file are taken");
        }
        long base;
        try {
            DeviceSupport support = devices.bindForPeer(DeviceHandleFile.device(file));
            base = support.openIpc(DeviceHandleFile.handle(file));
        } catch (RuntimeException e) {
            DeviceHandleFile.release(file, slot);
            return unreachable(id, e.getMessage());
        }
        PeerDeviceMapping m = new PeerDeviceMapping(id, base, DeviceHandleFile.length(file), file, slot);
        deviceRegions.put(id, m);
        hasPeerMappings = true;
        return m;
    }

    private DeviceMemory unreachable(long id, String why) {
        NicDevices.LOG.log(System.Logger.Level.WARNING, "device region " + id + " of " + this
                + " cannot be mapped into this process: " + why);
        deviceRegions.put(id, DeviceMemory.UNREACHABLE);
        return DeviceMemory.UNREACHABLE;
    }

    /** Agent step: unmaps device regions whose owner began to free them. */
    void sweepDeviceMappings() {
        if (!hasPeerMappings) {
            return;
        }
        synchronized (this) {
            if (released) {
                return;
            }
            List<Long> retired = new ArrayList<>();
            for (Map.Entry<Long, DeviceMemory> e : deviceRegions.entrySet()) {
                if (e.getValue() instanceof PeerDeviceMapping m && m.ownerClosing()) {
                    unmap(m);
                    retired.add(e.getKey());
                }
            }
            retired.forEach(deviceRegions::remove);
        }
    }

    /** Unmaps every device region of the peer (it went away, or the last queue pair to it closed). */
    private synchronized void closeDeviceMappings() {
        if (!hasPeerMappings) {
            return;
        }
        for (DeviceMemory d : deviceRegions.values()) {
            if (d instanceof PeerDeviceMapping m) {
                unmap(m);
            }
        }
        hasPeerMappings = false;
    }

    private void unmap(PeerDeviceMapping m) {
        DeviceSupport support = devices.current();
        String failure = support == null ? "no CUDA state" : m.close(support);
        if (failure != null) {
            NicDevices.LOG.log(System.Logger.Level.WARNING, "unmapping " + m + " of " + this + " failed: " + failure);
        }
    }

    /** @return device regions of the peer mapped through CUDA IPC now (for tests) */
    synchronized int peerMappings() {
        int n = 0;
        for (DeviceMemory d : deviceRegions.values()) {
            if (d instanceof PeerDeviceMapping m && m.isMapped()) {
                n++;
            }
        }
        return n;
    }

    private MemorySegment region(long regionId) {
        MemorySegment seg = regions.get(regionId);
        if (seg != null) {
            return seg;
        }
        try {
            return regions.computeIfAbsent(regionId,
                    id -> ShmDirectory.mapExisting(directory.resolve("region-" + id), true, arena));
        } catch (UncheckedIOException | IllegalStateException e) {
            return null; // the region file is gone: the peer closed the region
        }
    }

    /** Counts a queue pair that uses this peer. */
    synchronized void retain() {
        references++;
    }

    /**
     * Releases a queue pair's use; the last one unmaps everything.
     *
     * @return whether this was the last use
     */
    synchronized boolean release() {
        if (references == 1) {
            // A last look: a peer that died unseen by a sweep (the job's failure came through the bootstrap first)
            // has its directory removed now, not left for the next process that opens a NIC.
            checkLiveness();
        }
        if (--references == 0) {
            // Under the monitor: an agent sweep reading the node file finishes before the unmapping.
            closeDeviceMappings();
            released = true;
            arena.close();
            return true;
        }
        return false;
    }

    @Override
    public String toString() {
        return "peer pid " + pid + " at " + directory;
    }
}
