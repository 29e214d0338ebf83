package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.ucx.UcxLibrary;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A software NIC's UCX side: one thread-safe UCP worker, its address (which the NIC's endpoint descriptors
 * carry), one UCP endpoint per peer NIC, and the progress thread that receives the transport's active
 * messages and runs their handlers ({@link UcxTarget} for requests, {@link UcxLink} for responses).
 *
 * <p>Sends are made by the threads that execute work (the ringing thread or the agent), on the thread-safe
 * worker; the progress thread spins while messages flow, then yields, then sleeps in
 * {@code ucp_worker_wait} until the network or a sender ({@link #wake()}) wakes it.
 */
final class UcxNet implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(UcxNet.class.getName());
    private static final int SPINS = 20_000;
    private static final int YIELDS = 200;

    private final SoftwareNic nic;
    private final UcpWorker worker;
    private final byte[] address;
    private final UcxTarget target;
    private final Map<String, UcxPeer> peers = new HashMap<>();
    private final Thread progress;
    private volatile boolean running = true;
    private volatile boolean sleeping;

    /** A peer NIC as this NIC's worker reaches it; {@link #failure} is set when UCX reports it broken. */
    static final class UcxPeer {
        final UcpEndpoint endpoint;
        final String name;
        volatile String failure;

        UcxPeer(UcpEndpoint endpoint, String name) {
            this.endpoint = endpoint;
            this.name = name;
        }
    }

    private UcxNet(SoftwareNic nic) {
        this.nic = nic;
        this.worker = UcxLibrary.context().newWorker(new UcpWorkerParams().requestThreadSafety().requestWakeupRX()
                .requestWakeupTX());
        ByteBuffer a = worker.getAddress();
        this.address = new byte[a.remaining()];
        a.get(address);
        this.target = new UcxTarget(nic, this);
        worker.setAmRecvHandler(UcxWire.AM_ID, this::onMessage, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
        this.progress = Thread.ofPlatform().daemon().name("gdasync-ucx-" + nic.name()).unstarted(this::run);
        progress.start();
    }

    /**
     * @param nic the NIC
     * @return its UCX side
     * @throws IllegalStateException if UCX cannot be used here (the message says why)
     */
    static UcxNet open(SoftwareNic nic) {
        UcxLibrary.unavailableReason().ifPresent(r -> {
            throw new IllegalStateException("the ucx transport is unavailable: " + r);
        });
        return new UcxNet(nic);
    }

    /** @return the worker's address, for endpoint descriptors */
    byte[] address() {
        return address.clone();
    }

    UcpWorker worker() {
        return worker;
    }

    /**
     * @param peerAddress a peer NIC's worker address
     * @return the endpoint to it, made on first use and shared by every queue pair to that NIC
     */
    synchronized UcxPeer peer(byte[] peerAddress) {
        if (!running) {
            throw new IllegalStateException(nic.name() + " is closed");
        }
        String key = HexFormat.of().formatHex(peerAddress);
        UcxPeer p = peers.get(key);
        if (p == null || p.failure != null) {
            String name = "peer " + key.substring(0, Math.min(16, key.length()));
            ByteBuffer a = ByteBuffer.allocateDirect(peerAddress.length);
            a.put(peerAddress).flip();
            UcxPeer[] holder = new UcxPeer[1];
            UcpEndpoint ep = worker.newEndpoint(new UcpEndpointParams().setUcpAddress(a).setPeerErrorHandlingMode()
                    .setName("gdasync " + nic.name()).setErrorHandler((endpoint, status, message) -> {
                        UcxPeer failed = holder[0];
                        if (failed != null && failed.failure == null) {
                            failed.failure = "UCX reported " + message + " (status " + status + ")";
                            nic.wakeAgent();
                        }
                    }));
            p = new UcxPeer(ep, name);
            holder[0] = p;
            peers.put(key, p);
        }
        return p;
    }

    /**
     * Sends one message. The header and the data must stay unchanged until the send completes (the caller
     * keeps them reachable through {@code keep}).
     *
     * @param peer     the peer
     * @param header   the header, {@link UcxWire#SIZE} bytes
     * @param data     the payload's address, or 0
     * @param length   its length
     * @param keep     objects to keep reachable until the send completed
     * @param onFailed called with UCX's message if the send fails
     */
    void send(UcxPeer peer, MemorySegment header, long data, long length, Object keep, java.util.function.Consumer<String> onFailed) {
        UcxCallback callback = new UcxCallback() {
            @SuppressWarnings("unused")
            private final Object held = keep;

            @Override
            public void onError(int status, String message) {
                onFailed.accept("UCX send failed: " + message + " (status " + status + ")");
            }
        };
        try {
            peer.endpoint.sendAmNonBlocking(UcxWire.AM_ID, header.address(), header.byteSize(), data, length, 0, callback);
        } catch (RuntimeException e) {
            onFailed.accept("UCX send failed: " + e.getMessage());
        }
        wake();
    }

    /** Wakes the progress thread if it sleeps in the worker's wait. */
    void wake() {
        if (sleeping) {
            worker.signal();
        }
    }

    @SuppressWarnings("restricted") // the header UCX hands the handler is native memory of the given size
    private int onMessage(long headerAddress, long headerSize, UcpAmData data, UcpEndpoint replyEp) {
        if (headerSize < UcxWire.SIZE) {
            LOG.log(System.Logger.Level.WARNING, nic.name() + ": dropped a UCX message with a " + headerSize + "-byte header");
            return UcsConstants.STATUS.UCS_OK;
        }
        MemorySegment h = MemorySegment.ofAddress(headerAddress).reinterpret(headerSize);
        try {
            switch (UcxWire.type(h)) {
                case UcxWire.REQUEST -> target.onRequest(h, data, replyEp);
                case UcxWire.RESPONSE -> {
                    ShmQueuePair qp = nic.queuePairByToken(h.get(UcxWire.LONG, UcxWire.OFF_TO));
                    UcxLink link = qp == null ? null : qp.ucxLink();
                    if (link != null) {
                        link.onResponse(h, data);
                    }
                }
                case UcxWire.CLOSE -> {
                    ShmQueuePair qp = nic.queuePairByToken(h.get(UcxWire.LONG, UcxWire.OFF_TO));
                    UcxLink link = qp == null ? null : qp.ucxLink();
                    if (link != null && link.peerToken() == h.get(UcxWire.LONG, UcxWire.OFF_FROM)) {
                        ErrorDetail why = ErrorDetail.ofCode(h.get(UcxWire.INT, UcxWire.OFF_DETAIL));
                        link.peerEnded(why == ErrorDetail.PEER_QP_ERROR ? why : ErrorDetail.PEER_CLOSED);
                    }
                }
                default -> LOG.log(System.Logger.Level.WARNING, nic.name() + ": dropped a UCX message of type "
                        + UcxWire.type(h));
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, nic.name() + ": a UCX message handler failed", e);
        }
        return UcsConstants.STATUS.UCS_OK;
    }

    private void run() {
        int idle = 0;
        while (running) {
            int n;
            try {
                n = worker.progress();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.WARNING, nic.name() + ": UCX progress failed", e);
                n = 0;
            }
            if (n > 0) {
                idle = 0;
                continue;
            }
            idle++;
            if (idle < SPINS) {
                Thread.onSpinWait();
            } else if (idle < SPINS + YIELDS) {
                Thread.yield();
            } else {
                sleeping = true;
                try {
                    if (running && worker.progress() == 0 && running) {
                        worker.waitForEvents();
                    }
                } catch (Exception e) {
                    LOG.log(System.Logger.Level.WARNING, nic.name() + ": UCX progress failed", e);
                } finally {
                    sleeping = false;
                }
                idle = SPINS; // after a sleep, yield before sleeping again
            }
        }
    }

    /** Stops the progress thread, closes the endpoints and the worker. */
    @Override
    public void close() {
        List<UcxPeer> all;
        synchronized (this) {
            if (!running) {
                return;
            }
            running = false;
            all = new ArrayList<>(peers.values());
            peers.clear();
        }
        worker.signal();
        try {
            progress.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (progress.isAlive()) {
            LOG.log(System.Logger.Level.WARNING, nic.name() + ": the UCX progress thread did not stop; leaving the worker open");
            return;
        }
        for (UcxPeer p : all) {
            try {
                // Flush first, so that the last messages (a queue pair's close) reach the peer.
                UcpRequest r = p.failure == null ? p.endpoint.closeNonBlockingFlush() : p.endpoint.closeNonBlockingForce();
                long deadline = System.nanoTime() + 1_000_000_000L;
                while (r != null && !r.isCompleted() && System.nanoTime() < deadline) {
                    worker.progress();
                }
            } catch (Exception e) {
                // the peer is gone already: nothing to flush
            }
        }
        worker.close();
    }
}
