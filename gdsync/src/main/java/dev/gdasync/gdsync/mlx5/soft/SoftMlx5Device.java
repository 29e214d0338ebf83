package dev.gdasync.gdsync.mlx5.soft;

import dev.gdasync.gdsync.memop.Doorbell;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.mlx5.Mlx5Cqe;
import dev.gdasync.gdsync.mlx5.Mlx5CqQueues;
import dev.gdasync.gdsync.mlx5.Mlx5Device;
import dev.gdasync.gdsync.mlx5.Mlx5Keys;
import dev.gdasync.gdsync.mlx5.Mlx5Layouts;
import dev.gdasync.gdsync.mlx5.Mlx5QpQueues;
import dev.gdasync.gdsync.mlx5.Mlx5QpShape;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.TrafficCounters;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The software mlx5 device: mlx5 queues in shared memory, laid out as {@code mlx5dv_init_obj} reports a ConnectX
 * NIC's (send queue of 64-byte basic blocks, receive queue of data segments, big-endian doorbell records, a
 * BlueFlame page, 64-byte CQEs), with an engine that plays the NIC: it parses the WQEs and receives the provider
 * wrote, executes them through a software NIC (its shared-memory and UCX transports, its access checks, 32-bit keys)
 * and writes the CQEs. Runs anywhere; the mlx5 provider drives it exactly as it drives hardware.
 *
 * <p>The engine runs on the software NIC's agent thread, on a thread that rang a doorbell by a call (the provider
 * calls {@link #doorbell}'s result after a host store), and on a thread that polls an empty completion queue.
 */
public final class SoftMlx5Device implements Mlx5Device {
    /** Bytes of an endpoint's header: magic and queue pair number. */
    private static final int ENDPOINT_MAGIC = 0x534d5835; // "SMX5"
    private static final int DBREC_BYTES = 64;
    private static final int BLUEFLAME_BYTES = 64;

    private final SoftwareNic nic;
    private final SoftEngine engine = new SoftEngine();
    private final Map<Long, MemoryRegion> registrations = new ConcurrentHashMap<>();
    private final Map<Long, SoftCq> cqs = new ConcurrentHashMap<>();
    private final Map<Long, SoftQp> qps = new ConcurrentHashMap<>();
    private final AtomicLong handles = new AtomicLong(1);
    private final AtomicInteger numbers = new AtomicInteger(1);
    private volatile boolean open = true;

    private SoftMlx5Device(SoftwareNic nic) {
        this.nic = nic;
        nic.addAgentDuty(engine);
    }

    /**
     * Opens a software mlx5 device over a new software NIC.
     *
     * @param config the software NIC's settings; the key width is set to 32 bits, as mlx5 WQEs carry keys
     * @return the device
     */
    public static SoftMlx5Device open(SwNicConfig config) {
        Objects.requireNonNull(config, "config");
        return new SoftMlx5Device(SoftwareNic.open(config.withKeyBits(32)));
    }

    @Override
    public String name() {
        return "swmlx5-" + nic.name();
    }

    /** @return the software NIC that moves this device's bytes */
    public SoftwareNic softwareNic() {
        return nic;
    }

    @Override
    public Region allocateHost(long bytes) {
        requireOpen();
        return nic.allocateHost(bytes);
    }

    @Override
    public Region allocateDevice(int gpu, long bytes) {
        requireOpen();
        return nic.allocateDevice(gpu, bytes);
    }

    @Override
    public Mlx5Keys register(Region region, long offset, long length, int access) {
        requireOpen();
        MemoryRegion mr = nic.register(region, offset, length, access);
        if ((mr.lkey() >>> 32) != 0 || (mr.rkey() >>> 32) != 0) {
            nic.deregister(mr);
            throw new IllegalStateException(nic.name() + " made keys wider than 32 bits: " + mr);
        }
        long handle = handles.getAndIncrement();
        registrations.put(handle, mr);
        return new Mlx5Keys((int) mr.lkey(), (int) mr.rkey(), handle);
    }

    @Override
    public void deregister(Mlx5Keys keys) {
        Objects.requireNonNull(keys, "keys");
        MemoryRegion mr = registrations.remove(keys.handle());
        if (mr == null) {
            throw new IllegalArgumentException("no registration of " + name() + " has handle " + keys.handle()
                    + " (deregistered twice?)");
        }
        if (open) {
            nic.deregister(mr);
        }
    }

    @Override
    public Mlx5CqQueues createCq(int entries) {
        requireOpen();
        if (entries < 1 || entries > 1 << 22) {
            throw new IllegalArgumentException("a completion queue holds 1 to " + (1 << 22) + " CQEs, asked for " + entries);
        }
        int count = Math.max(2, powerOfTwo(entries));
        Region region = nic.allocateHost((long) count * Mlx5Cqe.SIZE + DBREC_BYTES);
        MemorySegment s = region.segment();
        MemorySegment buffer = s.asSlice(0, (long) count * Mlx5Cqe.SIZE);
        MemorySegment dbrec = s.asSlice((long) count * Mlx5Cqe.SIZE, DBREC_BYTES);
        Mlx5Cqe.initialise(buffer, count);
        long handle = handles.getAndIncrement();
        Mlx5CqQueues queues = new Mlx5CqQueues(numbers.getAndIncrement(), buffer, count, Mlx5Cqe.SIZE, dbrec, handle);
        cqs.put(handle, new SoftCq(queues, region));
        return queues;
    }

    @Override
    public void destroyCq(Mlx5CqQueues cq) {
        Objects.requireNonNull(cq, "cq");
        SoftCq c = cqs.remove(cq.handle());
        if (c == null) {
            throw new IllegalArgumentException("CQ " + cq.cqn() + " is not a live completion queue of " + name());
        }
        c.region().close();
    }

    @Override
    public Mlx5QpQueues createQp(Mlx5CqQueues sendCq, Mlx5CqQueues recvCq, Mlx5QpShape shape) {
        requireOpen();
        SoftCq scq = liveCq(sendCq);
        SoftCq rcq = liveCq(recvCq);
        Objects.requireNonNull(shape, "shape");
        int sendDepth = powerOfTwo(shape.sendWqes());
        int recvDepth = powerOfTwo(shape.recvWqes());
        // The largest WQE: control, remote address, atomic, and the larger of the data segments and the inline payload.
        int units = 3 + Math.max(shape.maxRecvSge(), (4 + shape.maxInline() + Mlx5Layouts.DS_BYTES - 1) / Mlx5Layouts.DS_BYTES);
        int bbsPerWqe = (units * Mlx5Layouts.DS_BYTES + Mlx5Layouts.SEND_WQE_BB - 1) / Mlx5Layouts.SEND_WQE_BB;
        int sqBbs = powerOfTwo(sendDepth * bbsPerWqe);
        int rqStride = powerOfTwo(shape.maxRecvSge() * Mlx5Layouts.DS_BYTES);
        long sqBytes = (long) sqBbs * Mlx5Layouts.SEND_WQE_BB;
        long rqBytes = (long) recvDepth * rqStride;
        int scratchBytes = Math.max(64, shape.maxInline());
        Region region = nic.allocateHost(sqBytes + rqBytes + DBREC_BYTES + BLUEFLAME_BYTES + scratchBytes);
        QueuePair inner = null;
        MemoryRegion scratch = null;
        try {
            MemorySegment s = region.segment();
            long at = 0;
            MemorySegment sq = s.asSlice(at, sqBytes);
            at += sqBytes;
            MemorySegment rq = s.asSlice(at, rqBytes);
            at += rqBytes;
            MemorySegment dbrec = s.asSlice(at, DBREC_BYTES);
            at += DBREC_BYTES;
            MemorySegment blueFlame = s.asSlice(at, BLUEFLAME_BYTES);
            at += BLUEFLAME_BYTES;
            scratch = nic.register(region, at, scratchBytes, Access.LOCAL_WRITE);
            inner = nic.createQueuePair(new QueuePairConfig(sendDepth, recvDepth, Math.min(65536, 2 * sendDepth)));
            long handle = handles.getAndIncrement();
            Mlx5QpQueues queues = new Mlx5QpQueues(numbers.getAndIncrement() & 0xffffff, sq, sqBbs, rq, recvDepth, rqStride,
                    dbrec, blueFlame, shape.maxInline(), handle);
            SoftQp qp = new SoftQp(queues, inner, scq, rcq, region, scratch);
            scq.owner(qp);
            rcq.owner(qp);
            qps.put(handle, qp);
            engine.add(qp);
            return queues;
        } catch (RuntimeException e) {
            if (inner != null) {
                inner.close();
            }
            if (scratch != null) {
                nic.deregister(scratch);
            }
            region.close();
            throw e;
        }
    }

    @Override
    public Endpoint endpoint(Mlx5QpQueues qp) {
        SoftQp q = liveQp(qp);
        byte[] inner = q.inner().endpoint().toBytes();
        return Endpoint.of(ByteBuffer.allocate(8 + inner.length).putInt(ENDPOINT_MAGIC).putInt(qp.qpn()).put(inner).array());
    }

    @Override
    public void connect(Mlx5QpQueues qp, Endpoint remote) {
        SoftQp q = liveQp(qp);
        Objects.requireNonNull(remote, "remote");
        byte[] b = remote.toBytes();
        if (b.length <= 8 || ByteBuffer.wrap(b).getInt() != ENDPOINT_MAGIC) {
            throw new IllegalArgumentException("not a software mlx5 endpoint (" + b.length + " bytes): a peer on hardware"
                    + " cannot connect to the software mlx5 device; run both ends with the same GDASYNC_MLX5_DEVICE");
        }
        q.inner().connect(Endpoint.of(Arrays.copyOfRange(b, 8, b.length)));
    }

    @Override
    public void toError(Mlx5QpQueues qp) {
        SoftQp q = liveQp(qp);
        q.inner().abort(ErrorDetail.FLUSHED);
        q.run(false);
    }

    @Override
    public void destroyQp(Mlx5QpQueues qp) {
        Objects.requireNonNull(qp, "qp");
        SoftQp q = qps.remove(qp.handle());
        if (q == null) {
            throw new IllegalArgumentException("QP " + qp.qpn() + " is not a live queue pair of " + name());
        }
        engine.remove(q);
        q.close();
        q.inner().close();
        if (open) {
            nic.deregister(q.scratch());
        }
        q.region().close();
    }

    @Override
    public Doorbell doorbell(Mlx5QpQueues qp) {
        SoftQp q = liveQp(qp);
        return q::ring;
    }

    @Override
    public TrafficCounters counters(Mlx5QpQueues qp) {
        SoftQp q = qps.get(Objects.requireNonNull(qp, "qp").handle());
        return q == null || q.queues() != qp ? TrafficCounters.NONE : q.counters();
    }

    @Override
    public void expectStoreRing(Mlx5QpQueues qp) {
        liveQp(qp).expectRing();
        nic.wakeAgent();
    }

    @Override
    public void expectCompletion(Mlx5CqQueues cq) {
        SoftQp qp = liveCq(cq).owner();
        if (qp != null) {
            qp.expectCompletion();
            nic.wakeAgent();
        }
    }

    @Override
    public int progressStoreRings() {
        return engine.runAll(false);
    }

    @Override
    public WaitProgress waitProgress() {
        WaitProgress inner = nic.waitProgress();
        return () -> engine.runAll(false) + (inner != null ? inner.progress() : 0);
    }

    @Override
    public WaitProgress cqProgress(Mlx5CqQueues cq) {
        SoftCq c = liveCq(cq);
        return () -> {
            SoftQp qp = c.owner();
            return qp != null ? qp.runNow() : 0;
        };
    }

    /** The software NIC's error detail travels in the CQE's vendor syndrome. */
    @Override
    public ErrorDetail errorDetail(CompletionStatus status, int vendorSyndrome) {
        if (vendorSyndrome != 0) {
            try {
                return ErrorDetail.ofCode(vendorSyndrome);
            } catch (IllegalArgumentException e) {
                // not one of ours: fall back on what the status implies
            }
        }
        return Mlx5Device.super.errorDetail(status, vendorSyndrome);
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        for (SoftQp q : qps.values()) {
            destroyQp(q.queues());
        }
        nic.removeAgentDuty(engine);
        open = false;
        for (SoftCq c : cqs.values()) {
            c.region().close();
        }
        cqs.clear();
        registrations.clear();
        nic.close();
    }

    private SoftCq liveCq(Mlx5CqQueues cq) {
        Objects.requireNonNull(cq, "cq");
        SoftCq c = cqs.get(cq.handle());
        if (c == null || c.queues() != cq) {
            throw new IllegalArgumentException("CQ " + cq.cqn() + " is not a live completion queue of " + name());
        }
        return c;
    }

    private SoftQp liveQp(Mlx5QpQueues qp) {
        Objects.requireNonNull(qp, "qp");
        SoftQp q = qps.get(qp.handle());
        if (q == null || q.queues() != qp) {
            throw new IllegalArgumentException("QP " + qp.qpn() + " is not a live queue pair of " + name());
        }
        return q;
    }

    private void requireOpen() {
        if (!open) {
            throw new IllegalStateException(name() + " is closed");
        }
    }

    private static int powerOfTwo(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }

    @Override
    public String toString() {
        return "SoftMlx5Device{" + name() + "}";
    }
}
