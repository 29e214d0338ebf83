package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.DeviceRegion;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.gdasync.gdsync.swnic.Layouts.INT;
import static dev.gdasync.gdsync.swnic.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The software NIC over shared memory: the NIC model with no NIC, between processes of one node.
 *
 * <p>Each NIC owns a directory of shared-memory files (its node file with the memory-region table,
 * its queue pairs, its host regions) that its peers map. A send is executed by the sender: it copies
 * the payload straight into the receiver's posted buffer or target region and writes the receiver's
 * CQE (one copy, no receiver thread). Work rung by a call runs on the ringing thread; work rung by a
 * plain store is found by the NIC's {@link Agent}, which also watches peers' liveness.
 *
 * <p>Registered memory is host memory from {@link #allocateHost} or GPU memory from
 * {@link #allocateDevice}. Bytes that touch GPU memory move through the CUDA driver on a stream of the
 * NIC's own, in the process that executes the request; a peer process maps this NIC's GPU memory through
 * CUDA IPC. The CUDA binding is loaded only once device memory is allocated here or met at a peer.
 *
 * <p>A peer on another host (or any peer, with {@link Transport#UCX}) is reached over UCX: see
 * {@link SwNicConfig#transport()} and {@code docs/ucx.md}.
 */
public final class SoftwareNic implements Nic {
    static final System.Logger LOG = System.getLogger(SoftwareNic.class.getName());
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final SwNicConfig config;
    private final String name;
    private final ShmDirectory directory;
    private final long startMillis;
    private final Arena nodeArena = Arena.ofShared();
    private final MemorySegment node;
    private final MrTable mrTable;
    private final Agent agent;
    private final SecureRandom random = new SecureRandom();
    private final AtomicInteger nextQpn = new AtomicInteger(1);
    private final List<ShmQueuePair> queuePairs = new ArrayList<>();
    private final Map<Long, ShmQueuePair> byToken = new java.util.concurrent.ConcurrentHashMap<>();
    private final Object ucxLock = new Object();
    private volatile UcxNet ucx;
    private String ucxUnavailable;
    private final Map<String, RemoteNode> remoteNodes = new HashMap<>();
    private final Object devicesLock = new Object();
    private volatile NicDevices devices;
    private volatile boolean open = true;
    private final WaitProgress waitProgress = this::progressTransport;

    private SoftwareNic(SwNicConfig config) {
        this.config = config;
        this.name = "swnic" + INSTANCES.incrementAndGet() + "@" + ProcessHandle.current().pid();
        this.directory = ShmDirectory.open(config.shmBase(), config.jobId());
        this.startMillis = ShmDirectory.currentStartMillis();
        try {
            this.node = directory.createFile("node", Layouts.Node.size(config.mrCapacity()), nodeArena);
        } catch (RuntimeException e) {
            nodeArena.close();
            directory.close();
            throw e;
        }
        node.set(JAVA_INT, Layouts.Node.OFF_VERSION, Layouts.VERSION);
        node.set(JAVA_INT, Layouts.Node.OFF_MR_CAPACITY, config.mrCapacity());
        node.set(JAVA_LONG, Layouts.Node.OFF_PID, ProcessHandle.current().pid());
        node.set(JAVA_LONG, Layouts.Node.OFF_START_MILLIS, startMillis);
        INT.setRelease(node, Layouts.Node.OFF_STATE, Layouts.Node.STATE_ALIVE);
        LONG.setRelease(node, Layouts.Node.OFF_MAGIC, Layouts.Node.MAGIC);
        this.mrTable = new MrTable(node, config.mrCapacity());
        this.agent = new Agent(this);
        agent.start();
    }

    /**
     * Opens a software NIC: its shared-memory directory (after removing stale ones of dead processes)
     * and its agent thread.
     *
     * @param config settings
     * @return the NIC
     */
    public static SoftwareNic open(SwNicConfig config) {
        return new SoftwareNic(config);
    }

    /**
     * Opens a software NIC with {@link SwNicConfig#defaults()}.
     *
     * @return the NIC
     */
    public static SoftwareNic open() {
        return open(SwNicConfig.defaults());
    }

    @Override
    public String name() {
        return name;
    }

    /** @return the settings */
    public SwNicConfig config() {
        return config;
    }

    /** @return the shared-memory directory of this NIC */
    public ShmDirectory directory() {
        return directory;
    }

    long startMillis() {
        return startMillis;
    }

    @Override
    public HostRegion allocateHost(long bytes) {
        requireOpen();
        return directory.allocate(bytes);
    }

    /**
     * Allocates GPU memory that this NIC can register and that its peers can reach: zero-filled
     * {@code cuMemAlloc} memory on the context's device, whose CUDA IPC handle the NIC publishes in its
     * shared-memory directory for peers in other processes. Closing the region (or the NIC) deregisters it,
     * waits until no peer maps it any more (at most 10 s), then frees it.
     *
     * <p>One NIC serves one GPU: every device allocation of a NIC must be on the same device. The NIC
     * keeps a reference of its own to the device's primary context, so the caller's context may be closed
     * at any time.
     *
     * @param context a context of the device to allocate on
     * @param bytes   the length, {@code > 0}
     * @return the region; its {@link DeviceRegion#segment()} throws, its address is the device pointer
     * @throws IllegalArgumentException if the length is not positive, or the NIC uses another device
     * @throws IllegalStateException    if the NIC is closed
     * @throws dev.gdasync.gdsync.cuda.CudaException if the driver refuses (out of memory, ...)
     */
    public DeviceRegion allocateDevice(CudaContext context, long bytes) {
        requireOpen();
        return devices().allocate(context, bytes);
    }

    /**
     * Allocates GPU memory on the GPU with this ordinal, as {@link #allocateDevice(CudaContext, long)} does.
     *
     * @param device the GPU's ordinal
     * @param bytes  the length, {@code > 0}
     * @return the region, a {@link DeviceRegion}
     * @throws IllegalArgumentException if the length is not positive, no GPU has that ordinal, or the NIC uses
     *                                  another GPU
     * @throws IllegalStateException    if the NIC is closed
     * @throws dev.gdasync.gdsync.cuda.CudaException if CUDA cannot be used here or the driver refuses
     */
    @Override
    public DeviceRegion allocateDevice(int device, long bytes) {
        requireOpen();
        return devices().allocate(device, bytes);
    }

    /** @return the NIC's device memory state, made on first use */
    NicDevices devices() {
        NicDevices d = devices;
        if (d != null) {
            return d;
        }
        synchronized (devicesLock) {
            if (devices == null) {
                requireOpen();
                devices = new NicDevices(this);
            }
            return devices;
        }
    }

    /** @return the CUDA state executors copy with, or null while the NIC never met device memory */
    DeviceSupport deviceSupport() {
        NicDevices d = devices;
        return d == null ? null : d.current();
    }

    @Override
    public MemoryRegion register(Region region, long offset, long length, int access) {
        requireOpen();
        Access.validate(access);
        if (region.kind() == RegionKind.DEVICE) {
            return registerDevice(region, offset, length, access);
        }
        if (!(region instanceof HostRegion host) || !host.path().getParent().equals(directory.processDirectory())) {
            throw new IllegalArgumentException(region + " was not allocated by " + name
                    + ": peers can only reach regions from this NIC's allocateHost");
        }
        if (!host.isOpen()) {
            throw new IllegalArgumentException(region + " is closed");
        }
        if (offset < 0 || length <= 0 || offset > host.length() - length) {
            throw new IllegalArgumentException("range [" + offset + ", +" + length + ") is not inside " + region);
        }
        ShmMemoryRegion mr = mrTable.register(this, host, offset, length, access);
        // Closing the region ends its registrations, so no key outlives the memory it names; device copies
        // using it end before it is unmapped.
        host.addCloseListener(() -> {
            if (open && mr.isRegistered()) {
                mrTable.deregister(mr);
            }
            DeviceCopyLock.quiesce();
        });
        return mr;
    }

    private MemoryRegion registerDevice(Region region, long offset, long length, int access) {
        NicDevices d = devices;
        if (d == null || !d.owns(region)) {
            throw new IllegalArgumentException(region + " was not allocated by " + name
                    + ": peers can only reach device memory from this NIC's allocateDevice");
        }
        if (!region.isOpen()) {
            throw new IllegalArgumentException(region + " is closed");
        }
        if (offset < 0 || length <= 0 || offset > region.length() - length) {
            throw new IllegalArgumentException("range [" + offset + ", +" + length + ") is not inside " + region);
        }
        // The region's own close listener deregisters every range of it (NicDevices.retire).
        return mrTable.register(this, region, offset, length, access);
    }

    /** Deregisters every registration of a closing region. */
    void deregisterAll(Region region) {
        mrTable.deregisterAll(region);
    }

    @Override
    public void deregister(MemoryRegion mr) {
        requireOpen();
        if (!(mr instanceof ShmMemoryRegion shm) || shm.nic() != this) {
            throw new IllegalArgumentException(mr + " is not a memory region of " + name);
        }
        mrTable.deregister(shm);
    }

    /** @return live registrations */
    public int registrations() {
        return mrTable.size();
    }

    /** @return the open queue pair with this token, or null */
    ShmQueuePair queuePairByToken(long token) {
        return byToken.get(token);
    }

    /**
     * The NIC's UCX side, opened on first use when the transport is not shm and UCX can be used here.
     *
     * @return it, or null (then {@link #ucxUnavailableReason()} says why)
     */
    UcxNet ucx() {
        synchronized (ucxLock) {
            if (ucx == null && ucxUnavailable == null) {
                if (config.transport() == Transport.SHM) {
                    ucxUnavailable = "this NIC's transport is shm";
                } else if (!open) {
                    ucxUnavailable = name + " is closed";
                } else {
                    try {
                        ucx = UcxNet.open(this);
                    } catch (RuntimeException | LinkageError e) {
                        ucxUnavailable = e.getMessage();
                        if (config.transport() == Transport.UCX) {
                            LOG.log(System.Logger.Level.WARNING, name + ": " + ucxUnavailable);
                        }
                    }
                }
            }
            return ucx;
        }
    }

    /**
     * Called by a thread that found a completion queue empty: progresses UCX on that thread when this NIC has
     * queue pairs over UCX, so that a polling thread receives its messages itself.
     */
    void pollTransport() {
        UcxNet net = ucx;
        if (net != null && net.active()) {
            net.tryProgress();
        }
    }

    /** A thread that waits receives its own UCX messages, as one that polls does. */
    @Override
    public WaitProgress waitProgress() {
        return waitProgress;
    }

    private int progressTransport() {
        UcxNet net = ucx;
        return net != null && net.active() ? net.tryProgress() : 0;
    }

    /** @return why {@link #ucx()} is null */
    String ucxUnavailableReason() {
        synchronized (ucxLock) {
            return ucxUnavailable == null ? "UCX is not open" : ucxUnavailable;
        }
    }

    /** @return this NIC's UCX worker address for endpoint descriptors, or an empty array without UCX */
    byte[] ucxAddress() {
        UcxNet net = ucx();
        return net == null ? new byte[0] : net.address();
    }

    ShmMemoryRegion localMr(long lkey) {
        return mrTable.byLkey(lkey);
    }

    @Override
    public QueuePair createQueuePair(QueuePairConfig qpConfig) {
        ShmQueuePair qp;
        synchronized (this) {
            requireOpen();
            long token;
            do {
                token = random.nextLong();
            } while (token == 0);
            qp = new ShmQueuePair(this, nextQpn.getAndIncrement(), qpConfig, token);
            queuePairs.add(qp);
            byToken.put(token, qp);
        }
        agent.add(qp);
        return qp;
    }

    synchronized RemoteNode retainRemoteNode(ShmEndpoint ep) {
        requireOpen();
        String key = ep.directory().toString();
        RemoteNode n = remoteNodes.get(key);
        if (n == null) {
            n = new RemoteNode(this, ep.directory(), ep.pid(), ep.startMillis());
            remoteNodes.put(key, n);
        }
        n.retain();
        return n;
    }

    synchronized void releaseRemoteNode(RemoteNode n) {
        if (n.release()) {
            remoteNodes.remove(n.directory().toString());
        }
    }

    void forget(ShmQueuePair qp) {
        agent.remove(qp);
        synchronized (this) {
            queuePairs.remove(qp);
            byToken.remove(qp.token());
        }
    }

    @Override
    public int progressStoreRings() {
        return agent.runStoreRings();
    }

    void wakeAgent() {
        agent.wake();
    }

    /** Agent step: checks peers' liveness and queue pairs' health. */
    void sweep() {
        List<RemoteNode> nodes;
        List<ShmQueuePair> qps;
        synchronized (this) {
            nodes = new ArrayList<>(remoteNodes.values());
            qps = new ArrayList<>(queuePairs);
        }
        for (RemoteNode n : nodes) {
            n.checkLiveness();
            n.sweepDeviceMappings();
        }
        for (ShmQueuePair qp : qps) {
            qp.checkPeer();
        }
    }

    private void requireOpen() {
        if (!open) {
            throw new IllegalStateException(name + " is closed");
        }
    }

    /**
     * Closes every queue pair (peers see them closed), frees its device regions (once no peer maps them),
     * stops the agent, marks this node closed and removes its shared-memory files. Closing twice does
     * nothing.
     */
    @Override
    public void close() {
        List<ShmQueuePair> qps;
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            qps = new ArrayList<>(queuePairs);
        }
        INT.setRelease(node, Layouts.Node.OFF_STATE, Layouts.Node.STATE_CLOSED);
        for (ShmQueuePair qp : qps) {
            qp.close();
        }
        NicDevices d;
        synchronized (devicesLock) {
            d = devices;
        }
        if (d != null) {
            d.closeRegions();
        }
        agent.stop();
        UcxNet net;
        synchronized (ucxLock) {
            net = ucx;
            ucx = null;
            ucxUnavailable = name + " is closed";
        }
        if (net != null) {
            net.close();
        }
        directory.close();
        nodeArena.close();
        if (d != null) {
            d.close();
        }
    }

    /** @return whether the NIC is open */
    public boolean isOpen() {
        return open;
    }

    @Override
    public String toString() {
        return "SoftwareNic{" + name + ", " + directory.processDirectory() + "}";
    }
}
