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

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A software NIC's UCX side: one thread-safe UCP worker, its address (which the NIC's endpoint descriptors
 * carry), one UCP endpoint per peer NIC, and the progress thread that receives the transport's active
 * messages and runs their handlers ({@link UcxTarget} for requests, {@link UcxLink} for responses).
 *
 * <p>Only the progress thread touches the worker: threads that execute work (the ringing thread, the agent)
 * hand it their sends and endpoint creations as tasks. It spins while messages flow, then yields, then parks
 * for growing intervals (up to a millisecond) until a task ({@link #wake()}) or the interval wakes it.
 */
final class UcxNet implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(UcxNet.class.getName());
    /**
     * How the progress thread idles: briefly spins and yields, then parks up to a millisecond. It spins little:
     * threads that poll completion queues progress the worker themselves ({@link #tryProgress()}), and on a
     * machine with few CPUs a spinning progress thread takes the CPU from them.
     */
    private static final BackoffPolicy IDLE = new BackoffPolicy(2_000, 100, 20_000, 1_000_000);

    private final SoftwareNic nic;
    private final UcpWorker worker;
    private final byte[] address;
    private final UcxTarget target;
    private final Map<String, UcxPeer> peers = new HashMap<>();
    private final Thread progress;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    /** Held by whichever thread progresses the worker: the progress thread, or a thread polling a CQ. */
    private final ReentrantLock turn = new ReentrantLock();
    private volatile boolean running = true;
    private volatile boolean sleeping;
    /** Whether the progress thread was started: read on every empty CQ poll, so a plain flag. */
    private volatile boolean started;
    /** When a polling thread last took (or tried to take) the worker's turn. */
    private volatile long externalTurn;
    /**
     * A polling thread that took the turn this recently is taken to be polling still (it polls every
     * microsecond or so); the progress thread then parks this long between looks.
     */
    private static final long STAND_BY_NANOS = 20_000;

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
        // Single-threaded: only the progress thread calls the worker. A thread-safe worker would let senders call
        // it directly, but its lock, taken by the spinning progress thread, made each send wait milliseconds.
        this.worker = UcxLibrary.context().newWorker(new UcpWorkerParams());
        ByteBuffer a = worker.getAddress();
        this.address = new byte[a.remaining()];
        a.get(address);
        this.target = new UcxTarget(nic, this);
        worker.setAmRecvHandler(UcxWire.AM_ID, this::onMessage, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
        this.progress = Thread.ofPlatform().daemon().name("gdasync-ucx-" + nic.name()).unstarted(this::run);
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
    synchronized UcxPeer peer(byte[] peerAddress, boolean sameMachine) {
        if (!running) {
            throw new IllegalStateException(nic.name() + " is closed");
        }
        if (!started) {
            started = true;
            progress.start(); // a NIC whose queue pairs never use UCX runs no progress thread
        }
        String key = HexFormat.of().formatHex(peerAddress);
        UcxPeer p = peers.get(key);
        if (p == null || p.failure != null) {
            String name = "peer " + key.substring(0, Math.min(16, key.length()));
            CompletableFuture<UcxPeer> made = new CompletableFuture<>();
            onProgressThread(() -> {
                try {
                    made.complete(newPeer(peerAddress, name, sameMachine));
                } catch (RuntimeException e) {
                    made.completeExceptionally(e);
                }
            });
            try {
                p = made.get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw new IllegalStateException("UCX could not reach " + name + ": " + e.getCause().getMessage(), e.getCause());
            } catch (TimeoutException e) {
                throw new IllegalStateException("UCX did not make an endpoint to " + name + " within 10 s");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while connecting to " + name, e);
            }
            peers.put(key, p);
        }
        return p;
    }

    /**
     * Makes an endpoint; on the progress thread. UCX's peer error handling is asked for only when the peer is on
     * another machine: with it UCX leaves out its shared-memory transports (which cannot report a peer's
     * failure), and a peer on this machine in another network namespace would be reached over TCP, about six
     * times slower. Such a peer's failure is noticed by its pid and the links' heartbeats instead.
     */
    private UcxPeer newPeer(byte[] peerAddress, String name, boolean sameMachine) {
        ByteBuffer a = ByteBuffer.allocateDirect(peerAddress.length);
        a.put(peerAddress).flip();
        UcxPeer[] holder = new UcxPeer[1];
        UcpEndpointParams params = new UcpEndpointParams().setUcpAddress(a);
        if (!sameMachine) {
            params.setPeerErrorHandlingMode();
        }
        UcpEndpoint ep = worker.newEndpoint(params
                .setName("gdasync " + nic.name()).setErrorHandler((endpoint, status, message) -> {
                    UcxPeer failed = holder[0];
                    if (failed != null && failed.failure == null) {
                        failed.failure = "UCX reported " + message + " (status " + status + ")";
                        nic.wakeAgent();
                    }
                }));
        UcxPeer p = new UcxPeer(ep, name);
        holder[0] = p;
        return p;
    }

    /** Runs a task with the worker: at once when this thread has the worker's turn, else at the next turn. */
    private void onProgressThread(Runnable task) {
        if (turn.isHeldByCurrentThread()) {
            task.run();
            return;
        }
        if (running && turn.tryLock()) {
            // Nobody has the worker: run it here, after what was queued before it (order per peer).
            try {
                if (running) {
                    commands.add(task);
                    progressTasks();
                    return;
                }
            } finally {
                turn.unlock();
            }
        }
        commands.add(task);
        wake();
    }

    /** Runs the queued tasks. Caller holds {@link #turn}. */
    private int progressTasks() {
        int n = 0;
        for (Runnable t; (t = commands.poll()) != null; n++) {
            try {
                t.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, nic.name() + ": a UCX task failed", e);
            }
        }
        return n;
    }

    /**
     * Progresses the worker on the calling thread if no other thread does (a thread that polls a completion
     * queue: it then receives its own messages, with no hand-over to the progress thread).
     *
     * @return the events progressed, or 0 when another thread had the turn
     */
    int tryProgress() {
        externalTurn = System.nanoTime();
        if (!running || !turn.tryLock()) {
            return 0;
        }
        try {
            return running ? progressOnce() : 0;
        } finally {
            turn.unlock();
        }
    }

    /** One turn: queued tasks, then the worker. Caller holds {@link #turn}. */
    private int progressOnce() {
        int n = progressTasks();
        try {
            n += worker.progress();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, nic.name() + ": UCX progress failed", e);
        }
        return n;
    }

    /** @return whether the progress thread runs (a queue pair connected over UCX) */
    boolean active() {
        return started;
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
        onProgressThread(() -> {
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
        });
    }

    /** Wakes the progress thread if it parks. */
    void wake() {
        if (sleeping) {
            LockSupport.unpark(progress);
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
                    UcxLink link = linkOf(h);
                    if (link != null) {
                        link.onResponse(h, data);
                    }
                }
                case UcxWire.PING -> {
                    UcxLink link = linkOf(h);
                    if (link != null) {
                        link.heard();
                    }
                }
                case UcxWire.CLOSE -> {
                    UcxLink link = linkOf(h);
                    if (link != null) {
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

    /**
     * @param h a message's header
     * @return the UCX link of the queue pair the message is for, or null when there is none or the message does
     *         not come from that link's peer
     */
    private UcxLink linkOf(MemorySegment h) {
        ShmQueuePair qp = nic.queuePairByToken(h.get(UcxWire.LONG, UcxWire.OFF_TO));
        UcxLink link = qp == null ? null : qp.ucxLink();
        if (link == null || link.peerToken() != h.get(UcxWire.LONG, UcxWire.OFF_FROM)) {
            return null;
        }
        return link;
    }

    private void run() {
        // Spin while messages flow, then yield, then park with a growing interval; a sender unparks it. The
        // worker's own wait (ucp_worker_wait) is not used: UCX's shared-memory transports do not wake it, and
        // a message would sit until some other event.
        BackoffIdler idler = new BackoffIdler(IDLE);
        while (running) {
            if (System.nanoTime() - externalTurn < STAND_BY_NANOS && commands.isEmpty()) {
                // A thread that polls a completion queue progresses the worker: stand by rather than compete
                // with it for the CPU (on a machine with few CPUs both would spin).
                sleeping = true;
                LockSupport.parkNanos(STAND_BY_NANOS);
                sleeping = false;
                idler.reset();
                continue;
            }
            int n = 0;
            if (turn.tryLock()) {
                try {
                    if (running) {
                        n = progressOnce();
                    }
                } finally {
                    turn.unlock();
                }
            }
            if (n > 0) {
                idler.reset();
                continue;
            }
            sleeping = idler.isParking();
            idler.idle();
            sleeping = false;
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
        LockSupport.unpark(progress);
        try {
            if (started) {
                progress.join(10_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (progress.isAlive()) {
            LOG.log(System.Logger.Level.WARNING, nic.name() + ": the UCX progress thread did not stop; leaving the worker open");
            return;
        }
        // Messages queued after the thread's last turn (a queue pair's close) still go out.
        turn.lock();
        try {
            progressOnce();
        } finally {
            turn.unlock();
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
