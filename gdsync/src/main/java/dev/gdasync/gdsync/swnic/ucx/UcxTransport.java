package dev.gdasync.gdsync.swnic.ucx;

// Why this file is long: the UCP worker's turn, the progress thread and the endpoints' life cycle are one piece of
// single-threaded state; the message handlers and the FFM calls are already in their own classes.

import dev.gdasync.gdsync.concurrent.AgentThread;
import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.swnic.core.Connection;
import dev.gdasync.gdsync.swnic.core.HostIdentity;
import dev.gdasync.gdsync.swnic.core.NicCore;
import dev.gdasync.gdsync.swnic.core.SwEndpoint;
import dev.gdasync.gdsync.swnic.core.SwQueuePair;
import dev.gdasync.gdsync.swnic.core.SwTransport;
import dev.gdasync.gdsync.ucx.UcxLibrary;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.IdleStrategy;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * A software NIC's UCX side: one UCP worker, its address (which the NIC's endpoint descriptors carry), one UCP
 * endpoint per peer NIC, and the progress thread. The worker's active messages are handled by {@link UcxTarget}
 * (requests) and {@link UcxConnection} (responses and acknowledgements).
 *
 * <p>The worker is single-threaded: whichever thread holds its turn ({@link #turn}) calls it. A thread that polls
 * a completion queue takes the turn to progress the worker itself ({@link #tryProgress}), so it receives its own
 * messages with no hand-over; a thread that executes work sends at once when it gets the turn, else leaves the
 * send as a task for the holder ({@link #withTurn}). The progress thread takes the turn when nobody polls: it
 * spins while messages flow, then yields, then parks for growing intervals (up to a millisecond) until a task
 * ({@link #wake()}) or the interval wakes it; while polling threads progress the worker it stands by.
 *
 * <p>JUCX makes the context, the worker and the endpoints; the message path (sends, progress, the handler,
 * rendezvous receives) calls UCP through FFM on the same handles ({@link UcpCalls}).
 */
public final class UcxTransport implements SwTransport {
    private static final System.Logger LOG = System.getLogger(UcxTransport.class.getName());
    /**
     * How the progress thread idles: briefly spins and yields, then parks up to a millisecond. It spins little:
     * threads that poll completion queues progress the worker themselves ({@link #tryProgress()}), and on a
     * machine with few CPUs a spinning progress thread takes the CPU from them.
     */
    private static final BackoffPolicy IDLE = new BackoffPolicy(2_000, 100, 20_000, 1_000_000);

    private final NicCore nic;
    /** This NIC's queue pairs connected over UCX, by their token. */
    private final Map<Long, UcxConnection> connections = new ConcurrentHashMap<>();
    private final UcpWorker worker;
    /** The worker's native handle. */
    private final long workerHandle;
    private final byte[] address;
    private final UcxTarget target;
    private final Map<String, UcxPeer> peers = new HashMap<>();
    /** Every peer made, by its endpoint's native handle: whom {@link #onEndpointError} blames. */
    private final Map<Long, UcxPeer> peersByEndpoint = new ConcurrentHashMap<>();
    /** The endpoints' error handler, an upcall stub of {@link #onEndpointError} (not JUCX's, see {@link UcpCalls}). */
    private final MemorySegment errorHandler;
    /** The progress agent's thread, started with the first peer. */
    private volatile AgentThread progress;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    /** Held by whichever thread progresses the worker: the progress thread, or a thread polling a CQ. */
    private final WorkerTurn turn = new WorkerTurn();
    private volatile boolean running = true;
    private volatile boolean sleeping;
    /** Whether the progress thread was started: read on every empty CQ poll, so a plain flag. */
    private volatile boolean started;
    /**
     * How often polling threads asked for a turn ({@link #tryProgress}); the progress thread stands by while it
     * moves. Opaque, not atomic: a lost increment only delays that decision by one look.
     */
    private long polls;
    private static final VarHandle POLLS;

    static {
        try {
            POLLS = MethodHandles.lookup().findVarHandle(UcxTransport.class, "polls", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    /** The shortest and longest park of the progress thread while polling threads progress the worker. */
    private static final long MIN_STAND_BY_NANOS = 20_000;
    private static final long MAX_STAND_BY_NANOS = 1_000_000;

    /** The headers, the request parameters and the handler's upcall stub; closed after the worker. */
    private final Arena arena = Arena.ofShared();
    /** Parameters of requests (the peer may answer on the reply endpoint) and of other messages. */
    private final MemorySegment requestParams;
    private final MemorySegment messageParams;
    private final MemorySegment receiveParams;

    // Under the turn.
    private final ArrayDeque<MemorySegment> freeHeaders = new ArrayDeque<>();
    private final ArrayList<Unfinished> unfinished = new ArrayList<>();
    private final ArrayDeque<UcxConnection> acksDue = new ArrayDeque<>();
    /** The data of the message being handled. */
    private final AmData amData = new AmData();

    /** A peer NIC as this NIC's worker reaches it; {@link #failure} is set when UCX reports it broken. */
    static final class UcxPeer {
        final UcpEndpoint endpoint;
        /** The endpoint's native handle. */
        final long handle;
        final String name;
        /** Whether the peer is another worker: UCX then runs no handler within a send to it. */
        final boolean otherWorker;
        volatile String failure;

        UcxPeer(UcpEndpoint endpoint, String name, boolean otherWorker) {
            this.endpoint = endpoint;
            this.handle = endpoint.getNativeId();
            this.name = name;
            this.otherWorker = otherWorker;
        }
    }

    /**
     * The data of an active message, valid during its handler: its bytes when they came with it (eager), else
     * UCX's descriptor to receive them with {@link #receive} (rendezvous).
     */
    static final class AmData {
        long address;
        long length;
        boolean rendezvous;

        /** @return the bytes of an eager message */
        @SuppressWarnings("restricted") // UCX's eager data: native memory of the given length
        MemorySegment bytes() {
            return MemorySegment.ofAddress(address).reinterpret(length);
        }
    }

    /** What to do when a rendezvous receive ends. */
    interface Landing {
        /** @param ok whether the data arrived */
        void landed(boolean ok);
    }

    private UcxTransport(NicCore nic) {
        this.nic = nic;
        // Single-threaded: only the progress thread calls the worker. A thread-safe worker would let senders call
        // it directly, but its lock, taken by the spinning progress thread, made each send wait milliseconds.
        this.worker = UcxLibrary.context().newWorker(new UcpWorkerParams());
        ByteBuffer a = worker.getAddress();
        this.address = new byte[a.remaining()];
        a.get(address);
        this.workerHandle = worker.getNativeId();
        this.target = new UcxTarget(this);
        this.requestParams = UcpCalls.sendParams(arena, UcpCalls.AM_SEND_FLAG_REPLY);
        this.messageParams = UcpCalls.sendParams(arena, 0);
        this.receiveParams = UcpCalls.sendParams(arena, 0);
        MemorySegment handler = Linker.nativeLinker().upcallStub(ON_MESSAGE.bindTo(this), UcpCalls.AM_RECV_CALLBACK, arena);
        this.errorHandler = Linker.nativeLinker().upcallStub(ON_ENDPOINT_ERROR.bindTo(this), UcpCalls.ERROR_CALLBACK,
                arena);
        int status = UcpCalls.setAmHandler(workerHandle, UcxWire.AM_ID, handler, arena);
        if (status != UcpCalls.UCS_OK) {
            worker.close();
            arena.close();
            throw new IllegalStateException("UCX refused the transport's message handler (status " + status + ")");
        }
    }

    /**
     * @param nic the NIC
     * @return its UCX side
     * @throws IllegalStateException if UCX cannot be used here (the message says why)
     */
    public static UcxTransport open(NicCore nic) {
        UcxLibrary.unavailableReason().ifPresent(r -> {
            throw new IllegalStateException("the ucx transport is unavailable: " + r);
        });
        return new UcxTransport(nic);
    }

    @Override
    public String name() {
        return "ucx";
    }

    /** @return the NIC */
    NicCore nic() {
        return nic;
    }

    @Override
    public Connection connect(SwQueuePair qp, SwEndpoint ep) {
        UcxConnection c = new UcxConnection(qp, this, peer(ep.ucxAddress(), HostIdentity.sameMachine(ep.hostId())), ep);
        connections.put(qp.token(), c);
        return c;
    }

    /** A connection closed: messages for its queue pair find nobody from now on. */
    void forget(UcxConnection c) {
        connections.remove(c.queuePair().token(), c);
        if (lastConnection == c) {
            lastConnection = null;
        }
    }

    /** @return the worker's address, for endpoint descriptors */
    @Override
    public byte[] address() {
        return address.clone();
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
            // A NIC whose queue pairs never use UCX runs no progress thread.
            ProgressAgent agent = new ProgressAgent();
            progress = AgentThread.start(agent, agent.idleStrategy());
        }
        String key = HexFormat.of().formatHex(peerAddress);
        UcxPeer p = peers.get(key);
        if (p == null || p.failure != null) {
            String name = "peer " + key.substring(0, Math.min(16, key.length()));
            CompletableFuture<UcxPeer> made = new CompletableFuture<>();
            withTurn(() -> {
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
        UcpEndpointParams params = new UcpEndpointParams().setUcpAddress(a);
        if (!sameMachine) {
            params.setPeerErrorHandlingMode();
        }
        UcpEndpoint ep = worker.newEndpoint(params.setName("gdasync " + nic.name()));
        UcxPeer p = new UcxPeer(ep, name, !Arrays.equals(peerAddress, address));
        // Before the worker progresses again (this thread has the turn), so JUCX's handler never runs.
        peersByEndpoint.put(p.handle, p);
        int status = UcpCalls.setErrorHandler(p.handle, errorHandler, p.handle);
        if (status != UcpCalls.UCS_OK) {
            peersByEndpoint.remove(p.handle);
            ep.closeNonBlockingForce();
            throw new IllegalStateException("UCX refused the endpoint's error handler (status " + status + ")");
        }
        return p;
    }

    /**
     * Runs a task with the worker: at once when this thread has the worker's turn or can take it, else at the
     * next turn (the progress thread is woken for it). Tasks run in the order they were handed over.
     */
    void withTurn(Runnable task) {
        if (turn.isHeldByCurrentThread()) {
            if (!commands.isEmpty()) {
                progressTasks(); // what was queued before it goes first
            }
            task.run();
            return;
        }
        if (running && turn.tryLock()) {
            try {
                if (running) {
                    if (!commands.isEmpty()) {
                        progressTasks();
                    }
                    task.run();
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
        POLLS.setOpaque(this, (long) POLLS.getOpaque(this) + 1);
        if (!running || !turn.tryLock()) {
            return 0;
        }
        try {
            return running ? progressOnce() : 0;
        } finally {
            turn.unlock();
        }
    }

    /**
     * @param token a queue pair's token
     * @return the UCX connection of this NIC's queue pair with that token, or null. The last one found is
     *         remembered (a ping-pong's messages are all for one queue pair) until it closes.
     */
    UcxConnection connection(long token) {
        UcxConnection c = lastConnection;
        if (c != null && token == lastToken && c.queuePair().state() != QpState.CLOSED) {
            return c;
        }
        c = connections.get(token);
        if (c != null) {
            lastConnection = c;
            lastToken = token;
        }
        return c;
    }

    /** Turns in a row in which nothing happened; under the turn. */
    private int quietTurns;
    private volatile UcxConnection lastConnection;
    private long lastToken;

    /**
     * One turn: queued tasks, the worker, sends UCX finished since; the second turn in a row in which nothing
     * happened also sends the acknowledgements owed (no request of this NIC is about to carry them). Not the
     * first: a thread that waits polls several completion queues, each poll a turn, and one turn after it
     * received a message it is still reaping that message, about to answer it with a request that carries the
     * acknowledgement. Caller holds {@link #turn}.
     */
    private int progressOnce() {
        int n = progressTasks();
        n += UcpCalls.progress(workerHandle);
        if (!unfinished.isEmpty()) {
            reapUnfinished();
        }
        if (n > 0) {
            quietTurns = 0;
        } else if (++quietTurns >= 2 && !acksDue.isEmpty()) {
            flushAcks();
        }
        return n;
    }

    /**
     * A thread that polls or waits for a completion progresses the worker itself, once a queue pair is connected
     * over UCX.
     */
    @Override
    public int progress() {
        return started ? tryProgress() : 0;
    }

    // ---- sending (all under the turn) ----

    /**
     * @return a cleared message header from the pool; it returns to the pool once UCX is done with the message
     *         it is sent with. Caller holds the turn.
     */
    MemorySegment takeHeader() {
        MemorySegment h = freeHeaders.poll();
        if (h == null) {
            MemorySegment chunk = arena.allocate(UcxWire.SIZE * HEADERS_PER_CHUNK, 8);
            for (int i = 1; i < HEADERS_PER_CHUNK; i++) {
                freeHeaders.add(chunk.asSlice(i * UcxWire.SIZE, UcxWire.SIZE));
            }
            h = chunk.asSlice(0, UcxWire.SIZE);
        }
        return h;
    }

    private static final int HEADERS_PER_CHUNK = 32;

    /** @return the messages this worker sent (written under the turn; for tests) */
    public long messagesSent() {
        return messagesSent;
    }

    private long messagesSent;

    /** Returns a header that was not sent to the pool. Caller holds the turn. */
    void releaseHeader(MemorySegment header) {
        freeHeaders.add(header);
    }

    /**
     * Sends one message; caller holds the turn. The header (from {@link #takeHeader}) and the data must stay
     * unchanged until UCX is done with them: most small messages are done when this returns; the others are
     * checked on each turn, and {@code keep} stays reachable until then.
     *
     * @param peer         the peer
     * @param header       the header
     * @param headerLength {@link UcxWire#SHORT_SIZE} or {@link UcxWire#SIZE}
     * @param data         the payload's address, or 0
     * @param length       its length
     * @param keep         an object to keep reachable until UCX is done (a buffer the data lies in), or null
     * @param failTo       the link told when the send fails, or null
     * @param reply        whether UCX gives the receiver an endpoint to answer on: for a request to a queue pair
     *                     that may not have connected yet, whose NIC then answers "not ready" without knowing this
     *                     one. UCX sends such messages through a slower protocol, so a link asks only until it
     *                     heard from its peer.
     */
    void sendNow(UcxPeer peer, MemorySegment header, long headerLength, long data, long length, Object keep, UcxConnection failTo,
                 boolean reply) {
        send(peer.handle, header, headerLength, data, length, keep, failTo, reply,
                peer.otherWorker && length <= LIGHT_SEND_BYTES);
    }

    /**
     * The largest payload sent without a downcall's thread-state change ({@link UcpCalls#amSendToOtherWorker}): the
     * change costs about 25 ns, which only a small message notices, and a large send may register memory, during
     * which the JVM should be able to reach a safepoint.
     */
    private static final long LIGHT_SEND_BYTES = 1024;

    /**
     * Sends one message through the reply endpoint of a message being handled (a request from a queue pair this
     * NIC does not know); only from within that message's handler. Caller holds the turn.
     */
    void sendNow(long replyEndpoint, MemorySegment header, long data, long length) {
        send(replyEndpoint, header, UcxWire.SIZE, data, length, null, null, false, false);
    }

    private void send(long ep, MemorySegment header, long headerLength, long data, long length, Object keep, UcxConnection failTo,
                      boolean reply, boolean light) {
        messagesSent++;
        MemorySegment params = reply ? requestParams : messageParams;
        long r = light ? UcpCalls.amSendToOtherWorker(ep, UcxWire.AM_ID, header.address(), headerLength, data, length, params)
                : UcpCalls.amSend(ep, UcxWire.AM_ID, header.address(), headerLength, data, length, params);
        if (r == 0) {
            freeHeaders.add(header);
        } else if (UcpCalls.isError(r)) {
            freeHeaders.add(header);
            if (failTo != null) {
                failTo.sendFailed("UCX send failed (status " + UcpCalls.errorStatus(r) + ")");
            }
        } else {
            unfinished.add(new Unfinished(r, header, keep, failTo, null));
        }
    }

    /**
     * Receives the data of a rendezvous message into {@code buffer}; only from within that message's handler.
     * Caller holds the turn; {@code then} runs under the turn when the data is in (at once, or on a later turn).
     */
    void receive(AmData data, long buffer, Landing then) {
        long r = UcpCalls.amRecvData(workerHandle, data.address, buffer, data.length, receiveParams);
        if (r == 0) {
            then.landed(true);
        } else if (UcpCalls.isError(r)) {
            then.landed(false);
        } else {
            unfinished.add(new Unfinished(r, null, null, null, then));
        }
    }

    /**
     * A send or receive UCX has not finished: a send's header and data are UCX's until it has; a receive's
     * landing runs when it has.
     */
    private record Unfinished(long request, MemorySegment header, Object keep, UcxConnection failTo, Landing landing) {
    }

    private void reapUnfinished() {
        for (int i = 0; i < unfinished.size(); ) {
            Unfinished u = unfinished.get(i);
            int status = UcpCalls.requestStatus(u.request);
            if (status == UcpCalls.UCS_INPROGRESS) {
                i++;
                continue;
            }
            unfinished.remove(i);
            UcpCalls.requestFree(u.request);
            if (u.header != null) {
                freeHeaders.add(u.header);
            }
            if (status != UcpCalls.UCS_OK && u.failTo != null) {
                u.failTo.sendFailed("UCX send failed (status " + status + ")");
            }
            if (u.landing != null) {
                u.landing.landed(status == UcpCalls.UCS_OK);
            }
        }
    }

    /**
     * A link owes its peer an acknowledgement ({@link UcxConnection#owe}); it rides on the link's next request, or goes
     * on its own at the next quiet turn. Caller holds the turn.
     */
    void ackDue(UcxConnection link) {
        acksDue.add(link);
    }

    /**
     * Sends the acknowledgements that were owed at the last call already (a request would have carried them by
     * now), leaves the newer ones to ride. Caller holds the turn.
     *
     * @return how many went
     */
    private int flushStaleAcks() {
        int n = 0;
        for (Iterator<UcxConnection> it = acksDue.iterator(); it.hasNext(); ) {
            UcxConnection l = it.next();
            if (l.ackStale()) {
                it.remove();
                n += l.flushAck();
            }
        }
        return n;
    }

    /** Sends the acknowledgements still owed. Caller holds the turn. @return how many went */
    private int flushAcks() {
        int n = 0;
        for (UcxConnection l; (l = acksDue.poll()) != null; ) {
            n += l.flushAck();
        }
        return n;
    }

    /** Wakes the progress thread if it parks. */
    void wake() {
        AgentThread t = progress;
        if (sleeping && t != null) {
            t.wake();
        }
    }

    private static final MethodHandle ON_MESSAGE;
    private static final MethodHandle ON_ENDPOINT_ERROR;

    static {
        try {
            ON_MESSAGE = MethodHandles.lookup().findVirtual(UcxTransport.class, "onMessage", MethodType.methodType(int.class,
                    MemorySegment.class, MemorySegment.class, long.class, MemorySegment.class, long.class, MemorySegment.class));
            ON_ENDPOINT_ERROR = MethodHandles.lookup().findVirtual(UcxTransport.class, "onEndpointError",
                    MethodType.methodType(void.class, long.class, long.class, int.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The endpoints' error handler (an upcall from {@code ucp_worker_progress}): UCX found the endpoint broken (its
     * peer's connection reset, a timeout); the endpoint is no longer usable. Marks its peer failed, as the queue
     * pairs over it then learn. It must not throw.
     *
     * @param arg    the endpoint's handle, as {@link #newPeer} set it
     * @param ep     the endpoint
     * @param status UCX's status (a negative {@code ucs_status_t})
     */
    private void onEndpointError(long arg, long ep, int status) {
        try {
            UcxPeer failed = peersByEndpoint.get(arg);
            if (failed != null && failed.failure == null) {
                failed.failure = "UCX reported " + UcpCalls.describe(status);
                nic.wakeAgent();
            }
        } catch (Throwable t) {
            // nothing may leave the upcall
        }
    }

    /**
     * The active-message handler (an upcall from {@code ucp_worker_progress}, under the turn). It must not throw:
     * an exception leaving an upcall ends the JVM.
     */
    @SuppressWarnings("restricted") // the header and parameters UCX hands the handler: native memory of known size
    private int onMessage(MemorySegment arg, MemorySegment header, long headerSize, MemorySegment data, long length,
                          MemorySegment param) {
        try {
            if (headerSize < UcxWire.SHORT_SIZE) {
                LOG.log(System.Logger.Level.WARNING, nic.name() + ": dropped a UCX message with a " + headerSize + "-byte header");
                return UcpCalls.UCS_OK;
            }
            MemorySegment h = header.reinterpret(headerSize);
            MemorySegment p = param.reinterpret(UcpCalls.RECV_PARAM_SIZE);
            long attributes = p.get(ValueLayout.JAVA_LONG, 0);
            AmData d = amData;
            d.address = data.address();
            d.length = length;
            d.rendezvous = (attributes & UcpCalls.AM_RECV_ATTR_FLAG_RNDV) != 0;
            switch (UcxWire.type(h)) {
                case UcxWire.REQUEST -> target.onRequest(h, d, (attributes & UcpCalls.AM_RECV_ATTR_FIELD_REPLY_EP) != 0
                        ? p.get(ValueLayout.JAVA_LONG, UcpCalls.OFF_REPLY_EP) : 0);
                case UcxWire.RESPONSE -> {
                    UcxConnection link = linkOf(h);
                    if (link != null) {
                        link.onResponse(h.get(UcxWire.LONG, UcxWire.OFF_SEQUENCE),
                                CompletionStatus.ofCode(UcxWire.u8(h, UcxWire.OFF_STATUS)),
                                ErrorDetail.ofCode(h.get(UcxWire.INT, UcxWire.OFF_DETAIL)),
                                h.get(UcxWire.INT, UcxWire.OFF_LENGTH),
                                headerSize >= UcxWire.SIZE ? h.get(UcxWire.LONG, UcxWire.OFF_OPERAND) : 0, d);
                    }
                }
                case UcxWire.PING -> {
                    UcxConnection link = linkOf(h);
                    if (link != null) {
                        link.heard();
                    }
                }
                case UcxWire.CLOSE -> {
                    UcxConnection link = linkOf(h);
                    if (link != null) {
                        ErrorDetail why = ErrorDetail.ofCode(h.get(UcxWire.INT, UcxWire.OFF_DETAIL));
                        link.peerEnded(why == ErrorDetail.PEER_QP_ERROR ? why : ErrorDetail.PEER_CLOSED);
                    }
                }
                default -> LOG.log(System.Logger.Level.WARNING, nic.name() + ": dropped a UCX message of type "
                        + UcxWire.type(h));
            }
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.WARNING, nic.name() + ": a UCX message handler failed", t);
            } catch (Throwable ignored) {
                // nothing may leave the upcall
            }
        }
        return UcpCalls.UCS_OK;
    }

    /**
     * @param h a message's header
     * @return the UCX link of the queue pair the message is for, or null when there is none or the message does
     *         not come from that link's peer
     */
    private UcxConnection linkOf(MemorySegment h) {
        UcxConnection link = connection(h.get(UcxWire.LONG, UcxWire.OFF_TO));
        if (link == null || link.peerToken() != h.get(UcxWire.LONG, UcxWire.OFF_FROM)) {
            return null;
        }
        return link;
    }

    /**
     * The progress thread's agent. Its duty cycle progresses the worker when nobody else does: it spins while
     * messages flow, then yields, then parks with a growing interval; a sender unparks it. The worker's own wait
     * ({@code ucp_worker_wait}) is not used: UCX's shared-memory transports do not wake it, and a message would
     * sit until some other event.
     *
     * <p>While threads that poll completion queues progress the worker ({@link #tryProgress}), it stands by
     * instead of competing with them for the CPU (on a machine with few CPUs both would spin): its duty cycle
     * only sends the acknowledgements they left owed since its last look, and its idle strategy parks for a
     * stand-by interval that grows while there are none.
     */
    private final class ProgressAgent implements Agent {
        private long seenPolls = (long) POLLS.getOpaque(UcxTransport.this);
        private long standBy = MIN_STAND_BY_NANOS;
        /** The stand-by park the last duty cycle asked for, 0 for none. */
        private long standByPark;

        @Override
        public String roleName() {
            return "gdasync-ucx-" + nic.name();
        }

        @Override
        public int doWork() {
            if (!running) {
                throw new AgentTerminationException("the NIC's UCX transport closed", true);
            }
            long p = (long) POLLS.getOpaque(UcxTransport.this);
            if (p != seenPolls && commands.isEmpty()) {
                seenPolls = p;
                int owed = 0;
                if (!acksDue.isEmpty() && turn.tryLock()) {
                    try {
                        owed = running ? flushStaleAcks() : 0;
                    } finally {
                        turn.unlock();
                    }
                }
                standBy = owed > 0 ? MIN_STAND_BY_NANOS : Math.min(MAX_STAND_BY_NANOS, standBy << 1);
                standByPark = standBy;
                return 0;
            }
            standBy = MIN_STAND_BY_NANOS;
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
            return n;
        }

        /** @return the idle strategy of the agent's thread: a stand-by park, or the backoff */
        IdleStrategy idleStrategy() {
            BackoffIdler idler = new BackoffIdler(IDLE);
            return new IdleStrategy() {
                @Override
                public void idle(int workCount) {
                    if (workCount > 0) {
                        idler.reset();
                        return;
                    }
                    long park = standByPark;
                    if (park > 0) {
                        standByPark = 0;
                        sleeping = true;
                        LockSupport.parkNanos(park);
                        sleeping = false;
                        idler.reset();
                        return;
                    }
                    // Senders unpark the thread only while it parks (wake()).
                    sleeping = idler.isParking();
                    idler.idle();
                    sleeping = false;
                }

                @Override
                public void idle() {
                    idle(0);
                }

                @Override
                public void reset() {
                    idler.reset();
                }
            };
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
        AgentThread agent = progress;
        Thread thread = agent == null ? null : agent.thread();
        if (thread != null) {
            agent.wake();
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (thread != null && thread.isAlive()) {
            LOG.log(System.Logger.Level.WARNING, nic.name() + ": the UCX progress thread did not stop; leaving the worker open");
            return;
        }
        // Messages queued after the thread's last turn (a queue pair's close) and acknowledgements owed still go out.
        turn.lock();
        try {
            progressOnce();
            flushAcks();
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
        arena.close();
    }
}
