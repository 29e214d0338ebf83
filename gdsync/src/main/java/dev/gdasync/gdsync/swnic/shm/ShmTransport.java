package dev.gdasync.gdsync.swnic.shm;

import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.swnic.core.Connection;
import dev.gdasync.gdsync.swnic.core.NicCore;
import dev.gdasync.gdsync.swnic.core.SwEndpoint;
import dev.gdasync.gdsync.swnic.core.SwQueuePair;
import dev.gdasync.gdsync.swnic.core.SwTransport;
import dev.gdasync.gdsync.swnic.cudaipc.NicDevices;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The shared-memory transport: peers on this host, reached by mapping their files. Each peer process is mapped
 * once ({@link PeerNode}) and shared by every queue pair connected to it; the agent's sweep watches each peer's
 * liveness and unmaps device memory its owner began to free.
 */
public final class ShmTransport implements SwTransport {
    private final NicCore nic;
    private final NicDevices devices;
    private final Map<String, PeerNode> peers = new HashMap<>();

    /**
     * @param nic     the NIC
     * @param devices the NIC's device memory, which executors copy with and peers' device regions bind to
     */
    public ShmTransport(NicCore nic, NicDevices devices) {
        this.nic = nic;
        this.devices = devices;
    }

    @Override
    public String name() {
        return "shm";
    }

    @Override
    public Connection connect(SwQueuePair qp, SwEndpoint ep) {
        PeerNode node = retain(ep);
        try {
            return new ShmConnection(qp, this, new PeerQueuePair(node, ep), devices);
        } catch (RuntimeException e) {
            release(node);
            throw e;
        }
    }

    private synchronized PeerNode retain(SwEndpoint ep) {
        nic.requireOpen();
        String key = ep.directory().toString();
        PeerNode n = peers.get(key);
        if (n == null) {
            n = new PeerNode(nic, devices, ep.directory(), ep.pid(), ep.startMillis());
            peers.put(key, n);
        }
        n.retain();
        return n;
    }

    /** A connection to the peer closed; the last one unmaps the peer. */
    synchronized void release(PeerNode n) {
        if (n.release()) {
            peers.remove(n.directory().toString());
        }
    }

    /** Checks every peer's liveness and unmaps device regions whose owner began to free them. */
    @Override
    public void sweep() {
        List<PeerNode> nodes;
        synchronized (this) {
            nodes = new ArrayList<>(peers.values());
        }
        for (PeerNode n : nodes) {
            n.checkLiveness();
            n.sweepDeviceMappings();
        }
    }

    /** The peers are unmapped as their queue pairs close. */
    @Override
    public void close() {
    }

    /**
     * @param qp a queue pair connected over shared memory
     * @return how many of its peer's device regions this process maps through CUDA IPC now (for tests)
     * @throws IllegalArgumentException if the queue pair is not connected over shared memory
     */
    public static int peerMappings(QueuePair qp) {
        if (qp instanceof SwQueuePair sw && sw.connection() instanceof ShmConnection c) {
            return c.node().peerMappings();
        }
        throw new IllegalArgumentException(qp + " is not connected over shared memory");
    }
}
