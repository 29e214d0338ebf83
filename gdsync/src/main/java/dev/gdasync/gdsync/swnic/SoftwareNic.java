package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.concurrent.AgentDuty;
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
import dev.gdasync.gdsync.nic.NicMBeans;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.TrafficCounters;
import dev.gdasync.gdsync.swnic.core.NicCore;
import dev.gdasync.gdsync.swnic.core.SwMemoryRegion;
import dev.gdasync.gdsync.swnic.cudaipc.DeviceCopyLock;
import dev.gdasync.gdsync.swnic.cudaipc.NicDevices;
import dev.gdasync.gdsync.swnic.shm.ShmTransport;
import dev.gdasync.gdsync.swnic.ucx.UcxTransport;

import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * The software NIC: the NIC model with no NIC. Peers on this host are reached over shared memory, peers on other
 * hosts over UCX.
 *
 * <p>Each NIC owns a directory of shared-memory files (its node file with the memory-region table, its queue
 * pairs, its host regions) that its peers on this host map. A send is executed by the sender: it copies the
 * payload straight into the receiver's posted buffer or target region and writes the receiver's CQE (one copy,
 * no receiver thread). Work rung by a call runs on the ringing thread; work rung by a plain store is found by the
 * NIC's agent, which also watches peers' liveness.
 *
 * <p>Registered memory is host memory from {@link #allocateHost} or GPU memory from {@link #allocateDevice}.
 * Bytes that touch GPU memory move through the CUDA driver on a stream of the NIC's own, in the process that
 * executes the request; a peer process maps this NIC's GPU memory through CUDA IPC. The CUDA binding is loaded
 * only once device memory is allocated here or met at a peer.
 *
 * <p>This class puts the NIC together: its core ({@link NicCore}: queue pairs, completion queues, the
 * memory-region table, the agent), its transports ({@link ShmTransport}, and {@link UcxTransport} opened on
 * first use; see {@link SwNicConfig#transport()} and {@code docs/ucx.md}) and its device memory
 * ({@link NicDevices}). {@code docs/architecture.md} walks one send through these parts.
 */
public final class SoftwareNic implements Nic {
    private final SwNicConfig config;
    private final NicCore core;
    private final NicDevices devices;
    /** Unregisters the NIC's MXBean ({@link NicMBeans}). */
    private volatile AutoCloseable jmx = () -> { };

    private SoftwareNic(SwNicConfig config) {
        this.config = config;
        NicDevices[] made = new NicDevices[1];
        this.core = new NicCore(config, c -> {
            made[0] = new NicDevices(c);
            return new ShmTransport(c, made[0]);
        }, UcxTransport::open);
        this.devices = made[0];
    }

    /**
     * Opens a software NIC: its shared-memory directory (after removing stale ones of dead processes)
     * and its agent thread.
     *
     * @param config settings
     * @return the NIC
     * @throws NullPointerException if the settings are null
     */
    public static SoftwareNic open(SwNicConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        SoftwareNic nic = new SoftwareNic(config);
        nic.jmx = NicMBeans.registerIfWanted(nic);
        return nic;
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
        return core.name();
    }

    /** @return the settings */
    public SwNicConfig config() {
        return config;
    }

    /** @return the shared-memory directory of this NIC */
    public ShmDirectory directory() {
        return core.directory();
    }

    @Override
    public HostRegion allocateHost(long bytes) {
        core.requireOpen();
        return core.directory().allocate(bytes);
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
     * @throws NullPointerException     if the context is null
     * @throws IllegalArgumentException if the length is not positive, or the NIC uses another device
     * @throws IllegalStateException    if the NIC is closed
     * @throws dev.gdasync.gdsync.cuda.CudaException if the driver refuses (out of memory, ...)
     */
    public DeviceRegion allocateDevice(CudaContext context, long bytes) {
        Objects.requireNonNull(context, "context must not be null");
        core.requireOpen();
        return devices.allocate(context, bytes);
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
        core.requireOpen();
        return devices.allocate(device, bytes);
    }

    @Override
    public MemoryRegion register(Region region, long offset, long length, int access) {
        Objects.requireNonNull(region, "region must not be null");
        core.requireOpen();
        Access.validate(access);
        if (region.kind() == RegionKind.DEVICE) {
            return registerDevice(region, offset, length, access);
        }
        if (!(region instanceof HostRegion host) || !host.path().getParent().equals(core.directory().processDirectory())) {
            throw new IllegalArgumentException(region + " was not allocated by " + name()
                    + ": peers can only reach regions from this NIC's allocateHost");
        }
        if (!host.isOpen()) {
            throw new IllegalArgumentException(region + " is closed");
        }
        requireRange(region, offset, length);
        SwMemoryRegion mr = core.mrTable().register(host, offset, length, access);
        // Closing the region ends its registrations, so no key outlives the memory it names; device copies
        // using it end before it is unmapped.
        host.addCloseListener(() -> {
            if (core.isOpen() && mr.isRegistered()) {
                core.mrTable().deregister(mr);
            }
            DeviceCopyLock.quiesce();
        });
        return mr;
    }

    private MemoryRegion registerDevice(Region region, long offset, long length, int access) {
        if (!devices.owns(region)) {
            throw new IllegalArgumentException(region + " was not allocated by " + name()
                    + ": peers can only reach device memory from this NIC's allocateDevice");
        }
        if (!region.isOpen()) {
            throw new IllegalArgumentException(region + " is closed");
        }
        requireRange(region, offset, length);
        // The region's own close listener deregisters every range of it (NicDevices.retire).
        return core.mrTable().register(region, offset, length, access);
    }

    private static void requireRange(Region region, long offset, long length) {
        if (length <= 0) {
            throw new IllegalArgumentException("a registration needs at least one byte, got length " + length
                    + " in " + region);
        }
        if (offset < 0 || offset > region.length() - length) {
            throw new IllegalArgumentException("range [" + offset + ", +" + length + ") is not inside " + region);
        }
    }

    @Override
    public void deregister(MemoryRegion mr) {
        Objects.requireNonNull(mr, "mr must not be null");
        core.requireOpen();
        if (!(mr instanceof SwMemoryRegion sw) || sw.table() != core.mrTable()) {
            throw new IllegalArgumentException(mr + " is not a memory region of " + name());
        }
        core.mrTable().deregister(sw);
    }

    /** @return live registrations */
    public int registrations() {
        return core.mrTable().size();
    }

    @Override
    public QueuePair createQueuePair(QueuePairConfig qpConfig) {
        Objects.requireNonNull(qpConfig, "qpConfig must not be null");
        return core.createQueuePair(qpConfig);
    }

    @Override
    public TrafficCounters counters() {
        return core.counters();
    }

    @Override
    public Map<Integer, TrafficCounters> queuePairCounters() {
        return core.queuePairCounters();
    }

    @Override
    public int progressStoreRings() {
        return core.progressStoreRings();
    }

    /**
     * Parks on this process's wake word (a futex in shared memory, {@code Futex}): a peer on this host that completes a
     * request into this NIC wakes it at once; peers over UCX do not, and the park ends at its time.
     */
    @Override
    public void awaitPeers(long nanos, BooleanSupplier ready) {
        core.awaitPeers(nanos, ready);
    }

    /** A thread that waits receives its own UCX messages, as one that polls does. */
    @Override
    public WaitProgress waitProgress() {
        return core.waitProgress();
    }

    /**
     * Runs a duty on this NIC's agent thread, in every duty cycle, until it is removed: a device built on this NIC
     * (the software mlx5 device) plays its hardware's part on the same thread.
     *
     * @param duty the duty
     */
    public void addAgentDuty(AgentDuty duty) {
        core.addAgentDuty(duty);
    }

    /**
     * Stops running a duty; returns once the agent can no longer be running it.
     *
     * @param duty the duty
     */
    public void removeAgentDuty(AgentDuty duty) {
        core.removeAgentDuty(duty);
    }

    /** Cuts the agent's idle short: a device built on this NIC expects work rung by a plain store. */
    public void wakeAgent() {
        core.wakeAgent();
    }

    /** @return the UCX transport, opened on first use, or null when UCX is not used or unavailable (for tests) */
    UcxTransport ucx() {
        return (UcxTransport) core.ucx();
    }

    /**
     * Closes every queue pair (peers see them closed), frees its device regions (once no peer maps them),
     * stops the agent, marks this node closed and removes its shared-memory files. Closing twice does
     * nothing.
     */
    @Override
    public void close() {
        core.close(devices::closeRegions);
        devices.close();
        try {
            jmx.close();
        } catch (Exception e) {
            // JMX's bookkeeping only
        }
    }

    /** @return whether the NIC is open */
    public boolean isOpen() {
        return core.isOpen();
    }

    @Override
    public String toString() {
        return "SoftwareNic{" + name() + ", " + core.directory().processDirectory() + "}";
    }
}
