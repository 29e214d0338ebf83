package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.NicMBeans;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.ScatterGatherList;
import dev.gdasync.gdsync.nic.TrafficCounters;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The mlx5 provider's NIC: queue pairs that write mlx5 WQEs, ring with LibGDSync's doorbell stores and read 64-byte
 * CQEs, on whatever {@link Mlx5Device} holds the queues (a ConnectX NIC or the software mlx5 device).
 *
 * <p>Work requests are checked completely before anything is written, against the registrations made here: a bad
 * key or range is refused with a precise error and changes nothing (hardware would report it later, as an error
 * CQE).
 */
public final class Mlx5Nic implements Nic {
    /** Inline payload bytes a send may carry. */
    public static final int MAX_INLINE = 192;

    private final Mlx5Device device;
    private final CqWaitMode cqWait;
    private final Map<Integer, Mlx5MemoryRegion> byLkey = new ConcurrentHashMap<>();
    private final List<Mlx5QueuePair> queuePairs = new ArrayList<>();
    private volatile boolean open = true;
    /** The counts of closed queue pairs. */
    private TrafficCounters retired = TrafficCounters.NONE;
    /** Unregisters the NIC's MXBean ({@link NicMBeans}). */
    private volatile AutoCloseable jmx = () -> { };

    private Mlx5Nic(Mlx5Device device, CqWaitMode cqWait) {
        this.device = device;
        this.cqWait = cqWait;
    }

    /**
     * Opens the provider on a device; the NIC owns the device from here and closes it.
     *
     * @param device the device
     * @param cqWait how prepared waits test CQEs
     * @return the NIC
     */
    public static Mlx5Nic open(Mlx5Device device, CqWaitMode cqWait) {
        Mlx5Nic nic = new Mlx5Nic(Objects.requireNonNull(device, "device"), Objects.requireNonNull(cqWait, "cqWait"));
        nic.jmx = NicMBeans.registerIfWanted(nic);
        return nic;
    }

    @Override
    public String name() {
        return "mlx5:" + device.name();
    }

    /** @return the device under this NIC */
    public Mlx5Device device() {
        return device;
    }

    /** @return how prepared waits test CQEs */
    public CqWaitMode cqWait() {
        return cqWait;
    }

    @Override
    public Region allocateHost(long bytes) {
        requireOpen();
        if (bytes <= 0) {
            throw new IllegalArgumentException("a host region needs at least one byte, got " + bytes);
        }
        return device.allocateHost(bytes);
    }

    @Override
    public Region allocateDevice(int gpu, long bytes) {
        requireOpen();
        if (bytes <= 0) {
            throw new IllegalArgumentException("a device region needs at least one byte, got " + bytes);
        }
        return device.allocateDevice(gpu, bytes);
    }

    @Override
    public MemoryRegion register(Region region, long offset, long length, int access) {
        requireOpen();
        Objects.requireNonNull(region, "region");
        Access.validate(access);
        if (!region.isOpen()) {
            throw new IllegalArgumentException(region + " is closed");
        }
        if (length == 0) {
            throw new IllegalArgumentException("cannot register zero bytes of " + region + ": a registration needs at least one byte");
        }
        if (offset < 0 || length < 0 || offset > region.length() - length) {
            throw new IllegalArgumentException("range [" + offset + ", +" + length + ") is not inside " + region);
        }
        Mlx5Keys keys = device.register(region, offset, length, access);
        Mlx5MemoryRegion mr = new Mlx5MemoryRegion(region, offset, length, access, keys);
        byLkey.put(keys.lkey(), mr);
        return mr;
    }

    @Override
    public void deregister(MemoryRegion mr) {
        requireOpen();
        Objects.requireNonNull(mr, "mr");
        if (!(mr instanceof Mlx5MemoryRegion m) || byLkey.get(m.keys().lkey()) != m) {
            throw new IllegalArgumentException(mr + " is not a live memory region of " + name() + " (deregistered twice?)");
        }
        byLkey.remove(m.keys().lkey());
        m.invalidate();
        device.deregister(m.keys());
    }

    @Override
    public synchronized QueuePair createQueuePair(QueuePairConfig config) {
        requireOpen();
        Objects.requireNonNull(config, "config");
        Mlx5CqQueues sendCq = device.createCq(config.sendCqDepth());
        Mlx5CqQueues recvCq = null;
        try {
            recvCq = device.createCq(config.recvDepth());
            Mlx5QpQueues q = device.createQp(sendCq, recvCq,
                    new Mlx5QpShape(config.sendDepth(), config.recvDepth(), ScatterGatherList.MAX_SGE, MAX_INLINE));
            Mlx5QueuePair qp = new Mlx5QueuePair(this, config, q, sendCq, recvCq);
            queuePairs.add(qp);
            return qp;
        } catch (RuntimeException e) {
            if (recvCq != null) {
                device.destroyCq(recvCq);
            }
            device.destroyCq(sendCq);
            throw e;
        }
    }

    @Override
    public int progressStoreRings() {
        return device.progressStoreRings();
    }

    @Override
    public WaitProgress waitProgress() {
        return device.waitProgress();
    }

    /**
     * Finds a live registration that covers a local buffer.
     *
     * @param lkey    the buffer's key
     * @param address its address
     * @param length  its length
     * @param what    the buffer, for messages
     * @return the registration
     * @throws IllegalArgumentException if the key is not a live registration's or the buffer is outside it
     */
    Mlx5MemoryRegion localBuffer(long lkey, long address, int length, String what) {
        if ((lkey >>> 32) != 0) {
            throw new IllegalArgumentException(what + ": lkey 0x" + Long.toHexString(lkey) + " is not an mlx5 key (32 bits)");
        }
        Mlx5MemoryRegion mr = byLkey.get((int) lkey);
        if (mr == null || !mr.isValid()) {
            throw new IllegalArgumentException(what + ": lkey 0x" + Long.toHexString(lkey) + " matches no live registration of "
                    + name());
        }
        if (!mr.contains(address, length)) {
            throw new IllegalArgumentException(what + ": [0x" + Long.toHexString(address) + ", +" + length + ") is outside " + mr);
        }
        return mr;
    }

    synchronized void removed(Mlx5QueuePair qp) {
        if (queuePairs.remove(qp)) {
            retired = retired.plus(qp.counters());
        }
    }

    @Override
    public synchronized Map<Integer, TrafficCounters> queuePairCounters() {
        Map<Integer, TrafficCounters> m = new TreeMap<>();
        for (Mlx5QueuePair qp : queuePairs) {
            m.put(qp.number(), qp.counters());
        }
        return m;
    }

    @Override
    public synchronized TrafficCounters counters() {
        TrafficCounters sum = retired;
        for (Mlx5QueuePair qp : queuePairs) {
            sum = sum.plus(qp.counters());
        }
        return sum;
    }

    void requireOpen() {
        if (!open) {
            throw new IllegalStateException(name() + " is closed");
        }
    }

    /** Closes every queue pair, then the device. Closing twice does nothing. */
    @Override
    public void close() {
        List<Mlx5QueuePair> qps;
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            qps = new ArrayList<>(queuePairs);
        }
        for (Mlx5QueuePair qp : qps) {
            qp.close();
        }
        byLkey.clear();
        device.close();
        try {
            jmx.close();
        } catch (Exception e) {
            // JMX's bookkeeping only
        }
    }

    @Override
    public String toString() {
        return "Mlx5Nic{" + device.name() + ", waits " + cqWait + "}";
    }
}
