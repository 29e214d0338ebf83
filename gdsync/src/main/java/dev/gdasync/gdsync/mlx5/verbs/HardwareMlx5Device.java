package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.memop.Doorbell;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;
import dev.gdasync.gdsync.mlx5.Mlx5CqQueues;
import dev.gdasync.gdsync.mlx5.Mlx5Cqe;
import dev.gdasync.gdsync.mlx5.Mlx5Device;
import dev.gdasync.gdsync.mlx5.Mlx5Keys;
import dev.gdasync.gdsync.mlx5.Mlx5Layouts;
import dev.gdasync.gdsync.mlx5.Mlx5QpQueues;
import dev.gdasync.gdsync.mlx5.Mlx5QpShape;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Endpoint;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

import static dev.gdasync.gdsync.mlx5.verbs.VerbsConstants.IBV_QPS_ERR;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsConstants.IBV_QPS_INIT;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsConstants.IBV_QPS_RESET;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsConstants.IBV_QPS_RTR;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsConstants.IBV_QPS_RTS;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsLayouts.IBV_QP_ATTR;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsLayouts.IBV_QP_INIT_ATTR;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

// Why this file is long: every verbs object the device makes (protection domain, registrations, completion queues,
// queue pairs, dma-bufs) has its create, checked destroy and ordered release here, each with its own errno text.
/**
 * A ConnectX NIC through rdma-core: verbs make the objects (protection domain, registrations, completion queues, RC
 * queue pairs), and mlx5 direct verbs ({@code mlx5dv_init_obj}) say where libmlx5 put the queues, which the provider
 * then drives itself: it writes WQEs into the send queue, the doorbell record and the BlueFlame register, and reads
 * CQEs from the CQ buffer. Nothing here posts or polls through verbs.
 *
 * <p>One device is one port of one NIC, with one GID index (the GID its queue pairs send from on RoCE). Every object
 * it makes is released by the matching call or by {@link #close()}, in the order verbs needs: queue pairs, completion
 * queues, registrations, the protection domain, the memory, the device. Misuse (null, an object of another device, a
 * second destroy) fails with a message that says which; a failing verbs call throws a {@link VerbsException} naming
 * the call, its errno or return value and what it means. Calls are serialised on the device.
 *
 * <p>GPU memory is not supported yet: {@link #allocateDevice} and registering a {@link RegionKind#DEVICE} region
 * throw; {@link #registerDmaBuf} registers a dma-buf file descriptor a caller obtained elsewhere.
 */
public final class HardwareMlx5Device implements Mlx5Device {
    /** The scatter entries a send queue is sized for (see {@link #createQp}). */
    static final int SEND_SGE = 1;

    private final VerbsLibrary lib;
    private final String name;
    private final int port;
    private final int gidIndex;
    private final MemorySegment context;
    private final MemorySegment pd;
    private final DeviceLimits limits;
    private final PortAttributes portAttributes;
    private final byte[] gid;
    private final LiveObjects<Mlx5Keys> registrations;
    private final Map<Long, Region> registeredRegions = new HashMap<>();
    private final LiveObjects<Mlx5CqQueues> cqs;
    private final LiveObjects<Mlx5QpQueues> qps;
    private final Map<Long, QpEntry> qpEntries = new HashMap<>();
    private final List<PageAlignedRegion> regions = new ArrayList<>();
    private long nextRegionId;
    private boolean closed;

    /** What the device keeps of a queue pair besides its queues. */
    private static final class QpEntry {
        final int psn;
        final long sendCq;
        final long recvCq;
        int state = IBV_QPS_RESET;

        QpEntry(int psn, long sendCq, long recvCq) {
            this.psn = psn;
            this.sendCq = sendCq;
            this.recvCq = recvCq;
        }
    }

    private HardwareMlx5Device(VerbsLibrary lib, String name, int port, int gidIndex, MemorySegment context,
                               MemorySegment pd, DeviceLimits limits, PortAttributes portAttributes, byte[] gid) {
        this.lib = lib;
        this.name = name;
        this.port = port;
        this.gidIndex = gidIndex;
        this.context = context;
        this.pd = pd;
        this.limits = limits;
        this.portAttributes = portAttributes;
        this.gid = gid;
        this.registrations = new LiveObjects<>(name, "memory registration", Mlx5Keys::handle,
                k -> "registration (lkey 0x" + Integer.toHexString(k.lkey()) + ")");
        this.cqs = new LiveObjects<>(name, "CQ", Mlx5CqQueues::handle, c -> "CQ 0x" + Integer.toHexString(c.cqn()));
        this.qps = new LiveObjects<>(name, "QP", Mlx5QpQueues::handle, q -> "QP 0x" + Integer.toHexString(q.qpn()));
    }

    /**
     * Says whether this machine has an mlx5 device verbs can open, without opening one.
     *
     * @return null when rdma-core loads and lists at least one mlx5 device, else why not (rdma-core missing, no RDMA
     *         device, none served by the mlx5 provider)
     */
    public static String absentReason() {
        try {
            VerbsLibrary lib = VerbsLibrary.get();
            try (DeviceList list = DeviceList.get(lib)) {
                list.choose(null);
                return null;
            }
        } catch (VerbsException | IllegalStateException | UnsupportedOperationException e) {
            return e.getMessage();
        }
    }

    /**
     * Opens a port of an mlx5 device and allocates a protection domain.
     *
     * @param deviceName the device's name as verbs reports it ({@code mlx5_0}), or null for the first device the mlx5
     *                   provider serves
     * @param port       the port, from 1; it must be active
     * @param gidIndex   the GID table index queue pairs send from; on RoCE it must name a GID (which selects RoCE v1 or
     *                   v2 and the IP address); on InfiniBand the GID is not sent (peers route by LID)
     * @return the device
     * @throws IllegalArgumentException if the port or GID index is out of range
     * @throws VerbsException           if rdma-core is missing, there is no such device, the port is not active, or a
     *                                  verbs call fails; the message says which and what to check
     */
    public static HardwareMlx5Device open(String deviceName, int port, int gidIndex) {
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("a port number is 1 to 255, got " + port);
        }
        if (gidIndex < 0 || gidIndex > 255) {
            throw new IllegalArgumentException("a GID index is 0 to 255 (an address vector's sgid_index has 8 bits), got "
                    + gidIndex);
        }
        VerbsLibrary lib = VerbsLibrary.get();
        String name;
        MemorySegment context;
        try (DeviceList list = DeviceList.get(lib); Arena arena = Arena.ofConfined()) {
            int index = list.choose(deviceName);
            name = list.name(index);
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            context = lib.openDevice(errno, list.device(index));
            if (context.equals(MemorySegment.NULL)) {
                int e = VerbsLibrary.errno(errno);
                throw VerbsException.ofErrno("ibv_open_device(" + name + ")", e, e == Errno.EACCES || e == Errno.EPERM
                        ? "this user may not open /dev/infiniband/uverbs*: check its permissions (rdma group, udev rules)"
                        : "is the device's driver (mlx5_ib, ib_uverbs) healthy? see dmesg");
            }
        }
        MemorySegment pd = MemorySegment.NULL;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            MemorySegment deviceAttr = arena.allocate(VerbsLayouts.IBV_DEVICE_ATTR);
            int rc = lib.queryDevice(errno, context, deviceAttr);
            if (rc != 0) {
                throw VerbsException.ofReturn("ibv_query_device(" + name + ")", rc, VerbsLibrary.errno(errno), null);
            }
            DeviceLimits limits = DeviceLimits.read(deviceAttr);
            if (port > limits.ports()) {
                throw new IllegalArgumentException(name + " has " + limits.ports() + " port(s), numbered from 1; port " + port
                        + " does not exist");
            }
            MemorySegment portAttr = arena.allocate(VerbsLayouts.PORT_ATTR_ROOM, 8);
            rc = lib.queryPort(errno, context, port, portAttr);
            if (rc != 0) {
                throw VerbsException.ofReturn("ibv_query_port(" + name + ", port " + port + ")", rc, VerbsLibrary.errno(errno),
                        null);
            }
            PortAttributes ports = PortAttributes.read(portAttr);
            checkPort(name, port, ports);
            if (gidIndex >= ports.gidTableLength()) {
                throw new IllegalArgumentException("GID index " + gidIndex + " is out of port " + port + " of " + name
                        + "'s table of " + ports.gidTableLength() + " GIDs");
            }
            MemorySegment gidSegment = arena.allocate(VerbsLayouts.IBV_GID);
            rc = lib.queryGid(errno, context, port, gidIndex, gidSegment);
            if (rc != 0) {
                throw VerbsException.ofReturn("ibv_query_gid(" + name + ", port " + port + ", index " + gidIndex + ")", rc,
                        VerbsLibrary.errno(errno), "on RoCE a GID index names an entry only while its network interface has "
                                + "the address; list them with 'ibv_devinfo -v' or rdma-core's show_gids");
            }
            byte[] gid = gidSegment.toArray(JAVA_BYTE);
            if (ports.isEthernet() && isZero(gid)) {
                throw new IllegalArgumentException("GID index " + gidIndex + " of " + name + " port " + port + " is empty (all "
                        + "zeros): a RoCE queue pair sends from a GID; pick an index that 'ibv_devinfo -v' or show_gids lists "
                        + "with an IP address (RoCE v2 for a routed network)");
            }
            pd = lib.allocPd(errno, context);
            if (pd.equals(MemorySegment.NULL)) {
                throw VerbsException.ofErrno("ibv_alloc_pd(" + name + ")", VerbsLibrary.errno(errno), null);
            }
            return new HardwareMlx5Device(lib, name, port, gidIndex, context, pd, limits, ports, gid);
        } catch (RuntimeException e) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment errno = VerbsLibrary.errnoSlot(arena);
                if (!pd.equals(MemorySegment.NULL)) {
                    lib.deallocPd(errno, pd);
                }
                lib.closeDevice(errno, context);
            }
            throw e;
        }
    }

    private static void checkPort(String name, int port, PortAttributes ports) {
        if (ports.state() != VerbsConstants.IBV_PORT_ACTIVE) {
            throw new VerbsException("ibv_query_port", 0, "port " + port + " of " + name + " is "
                    + VerbsConstants.portState(ports.state()) + ", not ACTIVE: check the cable and the link ('ibv_devinfo', "
                    + "'ip link'); an InfiniBand port also needs a subnet manager (opensm)");
        }
        if (!ports.isEthernet() && ports.lid() == 0) {
            throw new VerbsException("ibv_query_port", 0, "port " + port + " of " + name + " is InfiniBand but has no LID: "
                    + "is a subnet manager (opensm) running on the fabric?");
        }
        if (VerbsConstants.mtuBytes(ports.activeMtu()) < 0) {
            throw new VerbsException("ibv_query_port", 0, "port " + port + " of " + name + " reports active MTU "
                    + ports.activeMtu() + ", which is no IBV_MTU_* value");
        }
    }

    private static boolean isZero(byte[] bytes) {
        for (byte b : bytes) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String name() {
        return name;
    }

    /** @return the port queue pairs are made on */
    public int port() {
        return port;
    }

    /** @return the GID index queue pairs send from */
    public int gidIndex() {
        return gidIndex;
    }

    /**
     * Allocates zero-filled, page-aligned host memory; registration pins whole pages, so the region takes whole pages.
     * Closing the region deregisters what is registered in it, then frees it; {@link #close()} frees every region.
     */
    @Override
    public synchronized Region allocateHost(long bytes) {
        ensureOpen("allocateHost");
        PageAlignedRegion region = PageAlignedRegion.allocate(++nextRegionId, bytes, lib.pageSize(), this::releaseRegion);
        regions.add(region);
        return region;
    }

    /**
     * Not supported yet.
     *
     * @throws UnsupportedOperationException always: see {@link #registerDmaBuf}
     */
    @Override
    public Region allocateDevice(int gpu, long bytes) {
        throw gpuMemoryUnsupported("allocateDevice");
    }

    private UnsupportedOperationException gpuMemoryUnsupported(String call) {
        return new UnsupportedOperationException(call + ": " + name + " cannot use GPU memory yet: registering it needs a "
                + "dma-buf file descriptor for the allocation (cuMemGetHandleForAddressRange with "
                + "CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD), which the cuda package does not offer; registerDmaBuf takes such a "
                + "descriptor (docs/mlx5-hardware.md)");
    }

    /**
     * Registers a range of a host region with {@code ibv_reg_mr}. Any open {@link RegionKind#HOST} region of this
     * process will do, not only one from {@link #allocateHost}.
     *
     * @throws UnsupportedOperationException if the region is GPU memory (see {@link #registerDmaBuf})
     * @throws IllegalArgumentException      if the range or the access flags are invalid
     * @throws VerbsException                if {@code ibv_reg_mr} fails
     */
    @Override
    public synchronized Mlx5Keys register(Region region, long offset, long length, int access) {
        ensureOpen("register");
        if (region == null) {
            throw new NullPointerException("register: the region is null");
        }
        if (region.kind() == RegionKind.DEVICE) {
            throw gpuMemoryUnsupported("register");
        }
        if (region.kind() != RegionKind.HOST) {
            throw new IllegalArgumentException("register: " + region + " is " + region.kind() + " memory; " + name
                    + " registers host memory");
        }
        if (!region.isOpen()) {
            throw new IllegalStateException("register: " + region + " is closed");
        }
        if (offset < 0 || length < 1 || offset > region.length() - length) {
            throw new IllegalArgumentException("register: the range " + offset + "+" + length + " is not inside " + region
                    + " of " + region.length() + " bytes");
        }
        Access.validate(access);
        long address = region.address() + offset;
        String call = "ibv_reg_mr(" + name + ", 0x" + Long.toHexString(address) + ", " + length + " bytes, "
                + Access.describe(access) + ")";
        Mlx5Keys keys = registered(call, address, length, access, -1, 0);
        registeredRegions.put(keys.handle(), region);
        return keys;
    }

    /**
     * Registers memory behind a dma-buf file descriptor ({@code ibv_reg_dmabuf_mr}): GPU memory exported by its
     * driver, for example. The descriptor may be closed once this returns.
     *
     * @param fd     the dma-buf file descriptor
     * @param offset the range's offset in the dma-buf
     * @param length its length, at least 1
     * @param iova   the address work requests and peers name the range's first byte by
     * @param access {@link Access} flags
     * @return the keys; {@link #deregister} ends the registration
     * @throws IllegalArgumentException if an argument is out of range
     * @throws VerbsException           if {@code ibv_reg_dmabuf_mr} fails
     */
    public synchronized Mlx5Keys registerDmaBuf(int fd, long offset, long length, long iova, int access) {
        ensureOpen("registerDmaBuf");
        if (fd < 0 || offset < 0 || length < 1) {
            throw new IllegalArgumentException("registerDmaBuf: needs fd >= 0, offset >= 0 and length >= 1, got fd " + fd
                    + ", offset " + offset + ", length " + length);
        }
        Access.validate(access);
        String call = "ibv_reg_dmabuf_mr(" + name + ", fd " + fd + ", offset " + offset + ", " + length + " bytes, iova 0x"
                + Long.toHexString(iova) + ", " + Access.describe(access) + ")";
        return registered(call, offset, length, access, fd, iova);
    }

    /** Registers host memory ({@code fd < 0}) or a dma-buf, and remembers the registration. */
    private Mlx5Keys registered(String call, long addressOrOffset, long length, int access, int fd, long iova) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            MemorySegment mr = fd < 0
                    ? lib.regMr(errno, pd, addressOrOffset, length, access)
                    : lib.regDmabufMr(errno, pd, addressOrOffset, length, iova, fd, access);
            if (mr.equals(MemorySegment.NULL)) {
                int e = VerbsLibrary.errno(errno);
                throw VerbsException.ofErrno(call, e, registrationHint(e));
            }
            MemorySegment m = mr.reinterpret(VerbsLayouts.IBV_MR.byteSize());
            Mlx5Keys keys = new Mlx5Keys(m.get(JAVA_INT, offset(VerbsLayouts.IBV_MR, "lkey")),
                    m.get(JAVA_INT, offset(VerbsLayouts.IBV_MR, "rkey")), mr.address());
            registrations.add(keys);
            return keys;
        }
    }

    private static String registrationHint(int errno) {
        return switch (errno) {
            case Errno.ENOMEM, Errno.EAGAIN -> "the locked-memory limit is likely too low: registered memory is pinned; "
                    + "raise RLIMIT_MEMLOCK ('ulimit -l unlimited', LimitMEMLOCK=infinity for a service, "
                    + "--ulimit memlock=-1 for a container)";
            case Errno.EFAULT -> "the range is not memory mapped by this process";
            case Errno.EINVAL -> "the device refuses the range or the access flags (REMOTE_WRITE and REMOTE_ATOMIC need "
                    + "LOCAL_WRITE)";
            case Errno.EPERM, Errno.EACCES -> "the process may not pin this memory";
            case Errno.EOPNOTSUPP -> "the kernel or device cannot register this kind of memory";
            default -> null;
        };
    }

    @Override
    public synchronized void deregister(Mlx5Keys keys) {
        ensureOpen("deregister");
        deregisterLive(registrations.require(keys, "deregister"));
    }

    private void deregisterLive(Mlx5Keys keys) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            int rc = lib.deregMr(errno, MemorySegment.ofAddress(keys.handle()));
            if (rc != 0) {
                throw VerbsException.ofReturn("ibv_dereg_mr(" + name + ", lkey 0x" + Integer.toHexString(keys.lkey()) + ")",
                        rc, VerbsLibrary.errno(errno), rc == Errno.EBUSY ? "a memory window is still bound to it" : null);
            }
        }
        registrations.remove(keys);
        registeredRegions.remove(keys.handle());
    }

    /** A region is closing: what is registered in it is deregistered before its memory is freed. */
    private synchronized void releaseRegion(PageAlignedRegion region) {
        regions.remove(region);
        if (closed) {
            return;
        }
        RuntimeException failure = null;
        for (Mlx5Keys keys : registrations.all()) {
            if (registeredRegions.get(keys.handle()) == region) {
                try {
                    deregisterLive(keys);
                } catch (RuntimeException e) {
                    failure = first(failure, e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Creates a completion queue with {@code ibv_create_cq} (libmlx5 rounds the size up to a power of two above it)
     * and finds its buffer with {@code mlx5dv_init_obj}.
     *
     * @throws IllegalArgumentException if {@code entries} is out of the device's range
     * @throws IllegalStateException    if libmlx5 made 128-byte CQEs ({@code MLX5_CQE_SIZE=128})
     * @throws VerbsException           if a verbs call fails
     */
    @Override
    public synchronized Mlx5CqQueues createCq(int entries) {
        ensureOpen("createCq");
        if (entries < 1 || entries > limits.maxCqe()) {
            throw new IllegalArgumentException("createCq: " + name + " makes CQs of 1 to " + limits.maxCqe()
                    + " entries, asked for " + entries);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            MemorySegment cq = lib.createCq(errno, context, entries);
            if (cq.equals(MemorySegment.NULL)) {
                throw VerbsException.ofErrno("ibv_create_cq(" + name + ", " + entries + " entries)", VerbsLibrary.errno(errno),
                        null);
            }
            try {
                MemorySegment dv = arena.allocate(VerbsLayouts.MLX5DV_CQ);
                initObj(arena, "cq", cq, dv, VerbsConstants.MLX5DV_OBJ_CQ, "CQ of " + entries + " entries");
                int count = dv.get(JAVA_INT, offset(VerbsLayouts.MLX5DV_CQ, "cqe_cnt"));
                int cqeSize = dv.get(JAVA_INT, offset(VerbsLayouts.MLX5DV_CQ, "cqe_size"));
                int cqn = dv.get(JAVA_INT, offset(VerbsLayouts.MLX5DV_CQ, "cqn"));
                if (cqeSize != Mlx5Cqe.SIZE) {
                    String env = System.getenv("MLX5_CQE_SIZE");
                    throw new IllegalStateException("createCq: " + name + " made CQ 0x" + Integer.toHexString(cqn) + " with "
                            + cqeSize + "-byte CQEs" + (env == null ? "" : " (MLX5_CQE_SIZE=" + env + " in the environment)")
                            + ": the provider reads 64-byte CQEs only; unset MLX5_CQE_SIZE or set it to 64");
                }
                MemorySegment buffer = dv.get(ADDRESS, offset(VerbsLayouts.MLX5DV_CQ, "buf"))
                        .reinterpret((long) count * cqeSize);
                MemorySegment dbrec = dv.get(ADDRESS, offset(VerbsLayouts.MLX5DV_CQ, "dbrec")).reinterpret(8);
                Mlx5CqQueues queues = new Mlx5CqQueues(cqn, buffer, count, cqeSize, dbrec, cq.address());
                Mlx5Cqe.initialise(buffer, count);
                cqs.add(queues);
                return queues;
            } catch (RuntimeException e) {
                lib.destroyCq(errno, cq);
                throw e;
            }
        }
    }

    /**
     * Destroys a completion queue. Its queue pairs must have been destroyed.
     *
     * @throws IllegalStateException if a queue pair still sends or receives through it, or it was destroyed
     */
    @Override
    public synchronized void destroyCq(Mlx5CqQueues cq) {
        ensureOpen("destroyCq");
        Mlx5CqQueues live = cqs.require(cq, "destroyCq");
        List<String> users = new ArrayList<>();
        for (Mlx5QpQueues qp : qps.all()) {
            QpEntry entry = qpEntries.get(qp.handle());
            if (entry.sendCq == live.handle() || entry.recvCq == live.handle()) {
                users.add("0x" + Integer.toHexString(qp.qpn()));
            }
        }
        if (!users.isEmpty()) {
            throw new IllegalStateException("destroyCq: CQ 0x" + Integer.toHexString(live.cqn()) + " of " + name
                    + " still serves QP " + String.join(", ", users) + ": destroy its queue pairs first");
        }
        destroyLiveCq(live);
    }

    private void destroyLiveCq(Mlx5CqQueues cq) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            int rc = lib.destroyCq(errno, MemorySegment.ofAddress(cq.handle()));
            if (rc != 0) {
                throw VerbsException.ofReturn("ibv_destroy_cq(" + name + ", CQ 0x" + Integer.toHexString(cq.cqn()) + ")", rc,
                        VerbsLibrary.errno(errno), rc == Errno.EBUSY ? "a queue pair still uses it" : null);
            }
        }
        cqs.remove(cq);
    }

    /**
     * Creates an RC queue pair with {@code ibv_create_qp} ({@code sq_sig_all} 0: the provider asks for completions
     * per WQE) and finds its queues with {@code mlx5dv_init_obj}. The send queue is sized for {@code shape.sendWqes()}
     * requests of one scatter entry or {@code shape.maxInline()} inline bytes; the shape names no send scatter length,
     * and a send of more entries takes more basic blocks of the same ring, which the provider counts itself.
     *
     * @throws IllegalArgumentException if a CQ is not this device's, or the shape exceeds the device's limits
     * @throws VerbsException           if a verbs call fails
     */
    @Override
    public synchronized Mlx5QpQueues createQp(Mlx5CqQueues sendCq, Mlx5CqQueues recvCq, Mlx5QpShape shape) {
        ensureOpen("createQp");
        Mlx5CqQueues send = cqs.require(sendCq, "createQp (send CQ)");
        Mlx5CqQueues recv = cqs.require(recvCq, "createQp (receive CQ)");
        Objects.requireNonNull(shape, "createQp: the shape is null");
        if (shape.sendWqes() > limits.maxQpWr() || shape.recvWqes() > limits.maxQpWr() || shape.maxRecvSge() > limits.maxSge()) {
            throw new IllegalArgumentException("createQp: " + shape + " exceeds what " + name + " offers: at most "
                    + limits.maxQpWr() + " work requests per queue and " + limits.maxSge() + " scatter entries");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            MemorySegment init = arena.allocate(IBV_QP_INIT_ATTR);
            init.set(ADDRESS, offset(IBV_QP_INIT_ATTR, "send_cq"), MemorySegment.ofAddress(send.handle()));
            init.set(ADDRESS, offset(IBV_QP_INIT_ATTR, "recv_cq"), MemorySegment.ofAddress(recv.handle()));
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_send_wr"), shape.sendWqes());
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_recv_wr"), shape.recvWqes());
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_send_sge"), SEND_SGE);
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_recv_sge"), shape.maxRecvSge());
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_inline_data"), shape.maxInline());
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "qp_type"), VerbsConstants.IBV_QPT_RC);
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "sq_sig_all"), 0);
            MemorySegment qp = lib.createQp(errno, pd, init);
            if (qp.equals(MemorySegment.NULL)) {
                int e = VerbsLibrary.errno(errno);
                throw VerbsException.ofErrno("ibv_create_qp(" + name + ", RC, " + shape + ")", e, e == Errno.EINVAL
                        ? "the device refuses the capacities: the inline size or a queue's depth is too large for it" : null);
            }
            try {
                int qpn = qp.reinterpret(VerbsLayouts.IBV_QP.byteSize()).get(JAVA_INT, offset(VerbsLayouts.IBV_QP, "qp_num"));
                // ibv_create_qp wrote back what it gave, which may exceed what was asked.
                int maxInline = init.get(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_inline_data"));
                MemorySegment dv = arena.allocate(VerbsLayouts.MLX5DV_QP);
                initObj(arena, "qp", qp, dv, VerbsConstants.MLX5DV_OBJ_QP, "QP 0x" + Integer.toHexString(qpn));
                Mlx5QpQueues queues = queuesOf(qpn, dv, maxInline, qp.address());
                qps.add(queues);
                qpEntries.put(qp.address(), new QpEntry(ThreadLocalRandom.current().nextInt() & 0xffffff, send.handle(),
                        recv.handle()));
                return queues;
            } catch (RuntimeException e) {
                lib.destroyQp(errno, qp);
                throw e;
            }
        }
    }

    private static Mlx5QpQueues queuesOf(int qpn, MemorySegment dv, int maxInline, long handle) {
        MemorySegment sqBuf = dv.get(ADDRESS, offset(VerbsLayouts.MLX5DV_QP, "sq", "buf"));
        int sqCount = dv.get(JAVA_INT, offset(VerbsLayouts.MLX5DV_QP, "sq", "wqe_cnt"));
        int sqStride = dv.get(JAVA_INT, offset(VerbsLayouts.MLX5DV_QP, "sq", "stride"));
        MemorySegment rqBuf = dv.get(ADDRESS, offset(VerbsLayouts.MLX5DV_QP, "rq", "buf"));
        int rqCount = dv.get(JAVA_INT, offset(VerbsLayouts.MLX5DV_QP, "rq", "wqe_cnt"));
        int rqStride = dv.get(JAVA_INT, offset(VerbsLayouts.MLX5DV_QP, "rq", "stride"));
        MemorySegment dbrec = dv.get(ADDRESS, offset(VerbsLayouts.MLX5DV_QP, "dbrec"));
        MemorySegment bfReg = dv.get(ADDRESS, offset(VerbsLayouts.MLX5DV_QP, "bf", "reg"));
        int bfSize = dv.get(JAVA_INT, offset(VerbsLayouts.MLX5DV_QP, "bf", "size"));
        if (sqStride != Mlx5Layouts.SEND_WQE_BB) {
            throw new IllegalStateException("QP 0x" + Integer.toHexString(qpn) + ": libmlx5 reports a send queue stride of "
                    + sqStride + " bytes; the provider writes " + Mlx5Layouts.SEND_WQE_BB + "-byte basic blocks");
        }
        // A BlueFlame size of 0 means the register takes doorbells only: the 8-byte store of a control segment's
        // first bytes, which is all the provider writes there.
        long bfBytes = Math.max(bfSize, 8);
        return new Mlx5QpQueues(qpn, sqBuf.reinterpret((long) sqCount * sqStride), sqCount,
                rqBuf.reinterpret((long) rqCount * rqStride), rqCount, rqStride, dbrec.reinterpret(8),
                bfReg.reinterpret(bfBytes), maxInline, handle);
    }

    /** Calls {@code mlx5dv_init_obj} for one object: {@code obj.<kind>.in = object, obj.<kind>.out = out}. */
    private void initObj(Arena arena, String kind, MemorySegment object, MemorySegment out, long type, String what) {
        MemorySegment obj = arena.allocate(VerbsLayouts.MLX5DV_OBJ);
        obj.set(ADDRESS, offset(VerbsLayouts.MLX5DV_OBJ, kind, "in"), object);
        obj.set(ADDRESS, offset(VerbsLayouts.MLX5DV_OBJ, kind, "out"), out);
        MemorySegment errno = VerbsLibrary.errnoSlot(arena);
        int rc = lib.initObj(errno, obj, type);
        if (rc != 0) {
            throw VerbsException.ofReturn("mlx5dv_init_obj(" + name + ", " + what + ")", rc, VerbsLibrary.errno(errno),
                    "libmlx5 does not serve this object: is " + name + " driven by the mlx5 provider?");
        }
    }

    /**
     * @return the queue pair's number and first PSN and the port's LID, GID (on RoCE; zeros on InfiniBand), number and
     *         active MTU, as a {@link VerbsEndpoint}
     */
    @Override
    public synchronized Endpoint endpoint(Mlx5QpQueues qp) {
        ensureOpen("endpoint");
        Mlx5QpQueues live = qps.require(qp, "endpoint");
        byte[] sendFrom = portAttributes.isEthernet() ? gid : new byte[16];
        return new VerbsEndpoint(live.qpn(), qpEntries.get(live.handle()).psn, portAttributes.lid(), sendFrom, port,
                portAttributes.activeMtu()).encode();
    }

    /**
     * Connects a queue pair in RESET to a peer's: RESET to INIT (port, P_Key index 0, every remote access), INIT to
     * RTR (the smaller of both ports' MTUs, the peer's number and PSN, an address vector by GID when the peer sent one,
     * by LID otherwise), RTR to RTS (this queue pair's PSN, ACK timeout and retries). See docs/mlx5-hardware.md for
     * the values and why.
     *
     * @throws IllegalArgumentException if the endpoint is not a hardware mlx5 endpoint, or cannot be reached from this
     *                                  port's link layer
     * @throws IllegalStateException    if the queue pair is not in RESET
     * @throws VerbsException           if a transition fails
     */
    @Override
    public synchronized void connect(Mlx5QpQueues qp, Endpoint remote) {
        ensureOpen("connect");
        Mlx5QpQueues live = qps.require(qp, "connect");
        if (remote == null) {
            throw new NullPointerException("connect: the remote endpoint is null");
        }
        VerbsEndpoint peer = VerbsEndpoint.decode(remote);
        QpEntry entry = qpEntries.get(live.handle());
        String qpName = "QP 0x" + Integer.toHexString(live.qpn()) + " of " + name;
        if (entry.state != IBV_QPS_RESET) {
            throw new IllegalStateException("connect: " + qpName + " is in " + stateName(entry.state)
                    + ", not RESET: a queue pair connects once");
        }
        if (peer.routesByLid()) {
            if (portAttributes.isEthernet()) {
                throw new IllegalArgumentException("connect: the peer sent no GID, but port " + port + " of " + name
                        + " is Ethernet (RoCE), which addresses peers by GID: is the peer's port InfiniBand? " + peer);
            }
            if (peer.lid() == 0) {
                throw new IllegalArgumentException("connect: the peer sent neither a GID nor a LID: " + peer);
            }
        } else if (!portAttributes.isEthernet()) {
            // An InfiniBand endpoint carries no GID (see endpoint): one that does comes from a RoCE port.
            throw new IllegalArgumentException("connect: the peer sent a GID, so its port is Ethernet (RoCE), but port "
                    + port + " of " + name + " is InfiniBand: " + peer);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IBV_QP_ATTR);
            QpTransitions.init(attr, port);
            modify(arena, live, attr, QpTransitions.INIT_MASK, "RESET->INIT", null);
            entry.state = IBV_QPS_INIT;
            QpTransitions.readyToReceive(attr, portAttributes.activeMtu(), peer, port, gidIndex, limits.maxQpRdAtom());
            modify(arena, live, attr, QpTransitions.RTR_MASK, "INIT->RTR", peer.routesByLid()
                    ? "the peer's LID " + peer.lid() + " is not reachable from port " + port + "?"
                    : "on RoCE the GID index (" + gidIndex + ") must name a GID whose RoCE version and IP network reach "
                    + "the peer's GID; list them with show_gids");
            entry.state = IBV_QPS_RTR;
            QpTransitions.readyToSend(attr, entry.psn, limits.maxQpInitRdAtom());
            modify(arena, live, attr, QpTransitions.RTS_MASK, "RTR->RTS", null);
            entry.state = IBV_QPS_RTS;
        }
    }

    private void modify(Arena arena, Mlx5QpQueues qp, MemorySegment attr, int mask, String transition, String hint) {
        MemorySegment errno = VerbsLibrary.errnoSlot(arena);
        int rc = lib.modifyQp(errno, MemorySegment.ofAddress(qp.handle()), attr, mask);
        if (rc != 0) {
            throw VerbsException.ofReturn("ibv_modify_qp(" + name + ", QP 0x" + Integer.toHexString(qp.qpn()) + ", "
                    + transition + ", mask 0x" + Integer.toHexString(mask) + ")", rc, VerbsLibrary.errno(errno), hint);
        }
    }

    /**
     * Moves a queue pair to the error state ({@code ibv_modify_qp} to {@code IBV_QPS_ERR}).
     *
     * @throws VerbsException if the transition fails
     */
    @Override
    public synchronized void toError(Mlx5QpQueues qp) {
        ensureOpen("toError");
        Mlx5QpQueues live = qps.require(qp, "toError");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IBV_QP_ATTR);
            QpTransitions.error(attr);
            modify(arena, live, attr, QpTransitions.ERR_MASK, stateName(qpEntries.get(live.handle()).state) + "->ERR",
                    null);
        }
        qpEntries.get(live.handle()).state = IBV_QPS_ERR;
    }

    @Override
    public synchronized void destroyQp(Mlx5QpQueues qp) {
        ensureOpen("destroyQp");
        destroyLiveQp(qps.require(qp, "destroyQp"));
    }

    private void destroyLiveQp(Mlx5QpQueues qp) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            int rc = lib.destroyQp(errno, MemorySegment.ofAddress(qp.handle()));
            if (rc != 0) {
                throw VerbsException.ofReturn("ibv_destroy_qp(" + name + ", QP 0x" + Integer.toHexString(qp.qpn()) + ")", rc,
                        VerbsLibrary.errno(errno), null);
            }
        }
        qps.remove(qp);
        qpEntries.remove(qp.handle());
    }

    /** @return null: the NIC executes what the BlueFlame register rang, nothing runs on the host */
    @Override
    public synchronized Doorbell doorbell(Mlx5QpQueues qp) {
        ensureOpen("doorbell");
        qps.require(qp, "doorbell");
        return null;
    }

    /**
     * Destroys every queue pair and completion queue, ends every registration, frees the protection domain and the
     * memory from {@link #allocateHost}, and closes the device. Goes on past a failure and throws the first, with the
     * others suppressed. Closing twice does nothing.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        RuntimeException failure = null;
        for (Mlx5QpQueues qp : qps.all()) {
            try {
                destroyLiveQp(qp);
            } catch (RuntimeException e) {
                failure = first(failure, e);
            }
        }
        for (Mlx5CqQueues cq : cqs.all()) {
            try {
                destroyLiveCq(cq);
            } catch (RuntimeException e) {
                failure = first(failure, e);
            }
        }
        for (Mlx5Keys keys : registrations.all()) {
            try {
                deregisterLive(keys);
            } catch (RuntimeException e) {
                failure = first(failure, e);
            }
        }
        closed = true;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = VerbsLibrary.errnoSlot(arena);
            int rc = lib.deallocPd(errno, pd);
            if (rc != 0) {
                failure = first(failure, VerbsException.ofReturn("ibv_dealloc_pd(" + name + ")", rc, VerbsLibrary.errno(errno),
                        rc == Errno.EBUSY ? "an object of the protection domain could not be released (see the suppressed "
                                + "failures)" : null));
            }
            // Memory is freed only once nothing can be registered in it: after the protection domain is gone.
            for (PageAlignedRegion region : new ArrayList<>(regions)) {
                region.close();
            }
            rc = lib.closeDevice(errno, context);
            if (rc != 0) {
                failure = first(failure, VerbsException.ofReturn("ibv_close_device(" + name + ")", rc,
                        VerbsLibrary.errno(errno), null));
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** @return whether {@link #close()} was called */
    public synchronized boolean isClosed() {
        return closed;
    }

    private void ensureOpen(String call) {
        if (closed) {
            throw new IllegalStateException(call + ": " + name + " is closed");
        }
    }

    private static RuntimeException first(RuntimeException failure, RuntimeException e) {
        if (failure == null) {
            return e;
        }
        failure.addSuppressed(e);
        return failure;
    }

    private static String stateName(int state) {
        return switch (state) {
            case IBV_QPS_RESET -> "RESET";
            case IBV_QPS_INIT -> "INIT";
            case IBV_QPS_RTR -> "RTR";
            case IBV_QPS_RTS -> "RTS";
            case IBV_QPS_ERR -> "ERR";
            default -> "state " + state;
        };
    }

    @Override
    public String toString() {
        return "HardwareMlx5Device{" + name + " port " + port + " (" + portAttributes.linkLayerName() + ", MTU "
                + VerbsConstants.mtuBytes(portAttributes.activeMtu()) + ", LID " + portAttributes.lid() + "), GID index "
                + gidIndex + " " + HexFormat.of().formatHex(gid) + ", firmware " + limits.firmware() + "}";
    }
}
