package dev.gdasync.gdsync.swnic.core;

// Why this file is long: the software NIC's queue pair owns the send queue, its execution lock and the fast path
// that runs a CPU post straight from its work request; the two paths share fields that must change together.

import dev.gdasync.gdsync.memop.Doorbell;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendExecutor;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.TrafficCounters;
import dev.gdasync.gdsync.nic.TrafficMeter;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.nic.WqeTemplate;
import dev.gdasync.gdsync.trace.CompletionWrittenEvent;
import dev.gdasync.gdsync.trace.DoorbellNoticedEvent;
import dev.gdasync.gdsync.trace.DoorbellRungEvent;
import dev.gdasync.gdsync.trace.FailureEvent;
import dev.gdasync.gdsync.trace.RnrRetryEvent;
import dev.gdasync.gdsync.trace.TraceEvents;
import dev.gdasync.gdsync.trace.WorkRequestEvent;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A queue pair of the software NIC, in a shared-memory file: send queue, receive queue, both completion queues,
 * doorbell record and doorbell. Its {@link Connection} (made at {@link #connect} by the transport that reaches the
 * peer) executes its rung requests; a peer on this host maps the file and executes its own requests into it.
 *
 * <p>Three kinds of thread touch it. The owner's CPU thread posts, prepares and polls (one at a time).
 * An executor runs rung work requests: the thread that rang by a call (CPU post, host stream), the
 * agent when the doorbell was rung by a plain store, and the agent or a thread polling the queue pair's
 * completions when a send that found no receive at the peer is retried; an execution lock makes them take turns, and a
 * ringer that finds the lock taken leaves its work to the holder, which checks the doorbell record
 * again after unlocking. The peer's executor claims entries of this queue pair's receive queue and
 * writes its receive CQEs.
 *
 * <p>It counts what it does in a {@link TrafficMeter} ({@link #counters()}) and, with the flight recorder on,
 * records each ring, drain, work request and CQE it writes ({@code dev.gdasync.gdsync.trace}).
 */
public final class SwQueuePair implements QueuePair {
    private static final VarHandle LOCK;
    private static final VarHandle EXECUTED;
    private static final VarHandle SQ_PRODUCED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            LOCK = l.findVarHandle(SwQueuePair.class, "lock", int.class);
            EXECUTED = l.findVarHandle(SwQueuePair.class, "executed", long.class);
            SQ_PRODUCED = l.findVarHandle(SwQueuePair.class, "sqProduced", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        // Not on the first ring: that would outlast the doorbell's grace and hand the ring to the agent.
        TraceEvents.preload();
    }

    private final NicCore nic;
    private final int qpn;
    private final QueuePairConfig config;
    private final long token;
    private final Arena arena;
    private final Path file;
    private final MemorySegment seg;
    private final Layouts.Qp layout;
    private final int sqMask;
    final SwCompletionQueue sendCq;
    final SwCompletionQueue recvCq;
    private final WorkRequestEncoder encoder;
    private final ReceiveQueue receiveQueue;
    private final ReceiveSlots receiveSlots;
    private final MemoryWord dbrecWord;
    private final MemoryWord doorbellWord;
    private final Doorbell doorbellCall = this::ring;
    private final Endpoint endpoint;
    private final Object flushLock = new Object();
    private final TrafficMeter meter;
    /** The transport's name and the peer's token, set at {@link #connect}: what events say. */
    private volatile String transportName = "none";
    private volatile long peerToken;

    private volatile QpState state = QpState.RESET;
    private volatile ErrorDetail errorDetail = ErrorDetail.NONE;
    /** Made at {@link #connect}; null before. */
    private volatile Connection connection;

    // Owner CPU thread; sqProduced, which executors read, is published with release stores (no fence
    // on the hot path).
    private long sqProduced;
    private long sqPosted;
    private SendExecutor boundExecutor;
    private long signaledPrepared;

    // Executors, under the lock.
    @SuppressWarnings("unused")
    private volatile int lock;
    @SuppressWarnings("unused")
    private volatile long executed;
    private long sendCqProduced;
    /** Requests handed to the connection by the drain in progress (not stalled). */
    private int handed;
    /** The reason the next flushed send fails with, set by {@link #peerGone}; volatile: an executor may flush it. */
    private volatile ErrorDetail pendingHeadError;
    private volatile boolean stalled;
    private volatile long storeRingExpected;

    /** How long the agent leaves freshly rung work to the thread that rang it. */
    static final long RING_GRACE_NANOS = 50_000;
    // Agent thread only.
    /** Whether the receives a dead peer had claimed were flushed after the queue pair had already failed. */
    private boolean claimedReceivesFlushed;
    private int agentSeenDbrec;
    private long agentSeenAt;

    SwQueuePair(NicCore nic, int qpn, QueuePairConfig config, long token) {
        this.nic = nic;
        this.qpn = qpn;
        this.config = config;
        this.token = token;
        this.layout = new Layouts.Qp(config.sendDepth(), config.recvDepth(), config.sendCqDepth());
        this.arena = Arena.ofShared();
        String name = "qp-" + qpn;
        this.file = nic.directory().file(name);
        try {
            this.seg = nic.directory().createFile(name, layout.size, arena);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        seg.set(JAVA_INT, Layouts.Qp.OFF_VERSION, Layouts.VERSION);
        seg.set(JAVA_INT, Layouts.Qp.OFF_QPN, qpn);
        seg.set(JAVA_INT, Layouts.Qp.OFF_SEND_DEPTH, config.sendDepth());
        seg.set(JAVA_INT, Layouts.Qp.OFF_RECV_DEPTH, config.recvDepth());
        seg.set(JAVA_INT, Layouts.Qp.OFF_SEND_CQ_DEPTH, config.sendCqDepth());
        seg.set(JAVA_LONG, Layouts.Qp.OFF_TOKEN, token);
        INT.setRelease(seg, Layouts.Qp.OFF_STATE, QpState.RESET.code());
        LONG.setRelease(seg, Layouts.Qp.OFF_MAGIC, Layouts.Qp.MAGIC);
        this.sqMask = config.sendDepth() - 1;
        this.meter = new TrafficMeter("QP " + qpn, token, true);
        this.dbrecWord = MemoryWord.word32(seg, Layouts.Qp.OFF_DBREC, "doorbell record of QP " + qpn);
        this.doorbellWord = MemoryWord.word64(seg, Layouts.Qp.OFF_DOORBELL, "doorbell of QP " + qpn);
        this.sendCq = new SwCompletionQueue("send CQ of QP " + qpn, seg, layout.sendCq, layout.sendRelease,
                config.sendCqDepth(), () -> signaledPrepared, "signaled sends", this::polledEmpty, nic.waitProgress(),
                new SwCompletionQueue.Identity(qpn, token, false, meter));
        this.recvCq = new SwCompletionQueue("recv CQ of QP " + qpn, seg, layout.recvCq, layout.recvRelease,
                config.recvDepth(), this::receivesPosted, "receives posted", this::polledEmpty, nic.waitProgress(),
                new SwCompletionQueue.Identity(qpn, token, true, meter));
        this.encoder = new WorkRequestEncoder(nic, seg);
        this.receiveQueue = new ReceiveQueue(qpn, seg, layout.rq, config.recvDepth(), recvCq, encoder);
        this.receiveSlots = new ReceiveSlots(seg, layout, qpn, config.recvDepth());
        this.endpoint = new SwEndpoint(nic.directory().processDirectory(), ProcessHandle.current().pid(), nic.startMillis(),
                qpn, token, config.sendDepth(), config.recvDepth(), config.sendCqDepth(), HostIdentity.current(),
                nic.ucxAddress()).encode();
    }

    @Override
    public int number() {
        return qpn;
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public ErrorDetail errorDetail() {
        return errorDetail;
    }

    @Override
    public QueuePairConfig config() {
        return config;
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    /** @return the random number that identifies this queue pair across processes */
    public long token() {
        return token;
    }

    /** @return the NIC the queue pair belongs to */
    public NicCore nic() {
        return nic;
    }

    /** @return the queue pair's file: transports read its send queue entries there */
    public MemorySegment segment() {
        return seg;
    }

    /** @return the receive queue and receive CQ as an executor of the peer's requests writes them */
    public ReceiveSlots receiveSlots() {
        return receiveSlots;
    }

    /** @return the connection to the peer, or null before {@link #connect} */
    public Connection connection() {
        return connection;
    }

    @Override
    public CompletionQueue sendCq() {
        return sendCq;
    }

    @Override
    public CompletionQueue recvCq() {
        return recvCq;
    }

    /**
     * Connects over the transport that reaches the peer: shared memory for a peer on this host, UCX for a peer on
     * another host (or for every peer, when the settings say so).
     */
    @Override
    public synchronized void connect(Endpoint remoteEndpoint) {
        java.util.Objects.requireNonNull(remoteEndpoint, "remote must not be null");
        if (state == QpState.CLOSED) {
            throw new IllegalStateException("queue pair " + qpn + " is closed");
        }
        if (connection != null) {
            throw new IllegalStateException("queue pair " + qpn + " is already connected to " + connection);
        }
        SwEndpoint ep = SwEndpoint.decode(remoteEndpoint);
        if (ep.token() == token) {
            throw new IllegalArgumentException("queue pair " + qpn + " cannot connect to itself");
        }
        SwTransport transport = transportFor(ep);
        Connection c = transport.connect(this, ep);
        LONG.setRelease(seg, Layouts.Qp.OFF_REMOTE_TOKEN, ep.token());
        transportName = transport.name();
        peerToken = ep.token();
        connection = c;
        if (state == QpState.RESET) {
            setState(QpState.READY);
        }
    }

    /** Chooses the transport: the settings and whether the peer runs on this host decide. */
    private SwTransport transportFor(SwEndpoint ep) {
        boolean sameHost = ep.hostId().equals(HostIdentity.current());
        if (sameHost && !nic.settings().ucxOnThisHost()) {
            return nic.shm();
        }
        if (!nic.settings().offersUcx()) {
            throw new IllegalArgumentException("queue pair " + qpn + " cannot reach its peer over shared memory: the peer runs on"
                    + " another host (" + ep.hostId() + ", this is " + HostIdentity.current() + ") and this NIC's transport is "
                    + "shm; use the ucx or auto transport");
        }
        if (!ep.offersUcx()) {
            throw new IllegalArgumentException("queue pair " + qpn + " cannot reach its peer over UCX: the peer's NIC offers no"
                    + " UCX address (its transport is shm, or UCX is unavailable there)"
                    + (sameHost ? "" : "; the peer runs on another host, so shared memory cannot be used either"));
        }
        SwTransport ucx = nic.ucx();
        if (ucx == null) {
            throw new IllegalStateException("queue pair " + qpn + " cannot reach its peer" + (sameHost ? "" : " on another host")
                    + ": " + nic.ucxUnavailableReason());
        }
        return ucx;
    }

    // ---- for connections whose requests complete later (UCX) ----

    /** Takes the execution lock, waiting for its holder: a transport completing a request in flight. */
    public void lockExecution() {
        while (!LOCK.compareAndSet(this, 0, 1)) {
            Thread.onSpinWait();
        }
    }

    /** Leaves the execution lock. */
    public void unlockExecution() {
        LOCK.setRelease(this, 0);
    }

    /**
     * Request {@code index}, which was in flight, is complete. Caller holds the execution lock.
     *
     * @param index the request
     */
    public void executedInFlight(long index) {
        EXECUTED.setRelease(this, index + 1);
        stalled = false;
    }

    /** The request in flight must be sent again (the peer was not ready): the agent will. Caller holds the lock. */
    public void stalledInFlight() {
        stalled = true;
        rnrRetry((long) EXECUTED.getOpaque(this));
        nic.wakeAgent();
    }

    /** A send found no receive posted at the peer: counted and recorded. Caller holds the lock. */
    private void rnrRetry(long index) {
        meter.rnrRetry();
        RnrRetryEvent event = new RnrRetryEvent();
        if (event.shouldCommit()) {
            event.queuePair = qpn;
            event.queuePairToken = token;
            event.sequence = index;
            event.transport = transportName;
            event.commit();
        }
    }

    @Override
    public TrafficCounters counters() {
        return meter.snapshot();
    }

    @Override
    public MemorySegment peerMemory(long rkey, long address, long length) {
        Connection c = connection;
        QpState s = state;
        return c == null || s == QpState.ERROR || s == QpState.CLOSED ? null : c.peerMemory(rkey, address, length);
    }

    @Override
    public void wakePeer() {
        Connection c = connection;
        if (c != null) {
            c.wakePeer();
        }
    }

    @Override
    public void postRecv(RecvWorkRequest wr) {
        java.util.Objects.requireNonNull(wr, "wr must not be null");
        requireNotClosed();
        receiveQueue.post(wr);
        if (state == QpState.ERROR) {
            flushReceives();
        }
    }

    private long receivesPosted() {
        return receiveQueue.posted();
    }

    @Override
    public boolean holdsUnrungSends() {
        long produced = (long) SQ_PRODUCED.getAcquire(this);
        return sqPosted != produced || dbrecWord.getAcquire32() != (int) sqPosted;
    }

    @Override
    public void postSend(SendWorkRequest wr) {
        java.util.Objects.requireNonNull(wr, "wr must not be null");
        requireSendable();
        if (sqPosted != sqProduced) {
            throw new IllegalStateException("queue pair " + qpn + " has " + (sqProduced - sqPosted)
                    + " prepared sends not yet posted; a CPU post would ring them out of prepare order");
        }
        if (dbrecWord.getAcquire32() != (int) sqPosted) {
            throw new IllegalStateException("queue pair " + qpn + " has sends posted to " + boundExecutor
                    + " that it has not rung yet; a CPU post would ring them early");
        }
        int length = encoder.checkSend(wr);
        checkSpace(wr.signaled());
        long seq = sqProduced;
        if (sendDirect(wr, length, seq)) {
            return;
        }
        encoder.writeWqe(wqe(seq), wr, length);
        publishPosted(seq, wr.signaled());
        ring();
    }

    /** A CPU post's bookkeeping and ring words: request {@code seq} is produced, posted and rung. Owner thread. */
    private void publishPosted(long seq, boolean signaled) {
        SQ_PRODUCED.setRelease(this, seq + 1);
        sqPosted = seq + 1;
        if (signaled) {
            signaledPrepared++;
        }
        dbrecWord.set32((int) (seq + 1), true);
        doorbellWord.set64(doorbellValue(seq), false);
    }

    /**
     * The small-message fast path of a CPU post: when nothing earlier is left to run and the execution lock is free,
     * the connection executes the send from the work request's fields, and its send queue entry is never written
     * nor read (a 256-byte entry in a ring too large to stay in the cache, written and decoded again by the same
     * thread). The connection declines, changing nothing, whenever the request is not the plain case it handles (a
     * receive posted at the peer, one buffer at each end in host memory, every check passed), and the caller then
     * writes the entry and rings as usual, so a stall (retried by the agent from the entry), a refusal and every
     * other path run as before. The doorbell record and doorbell are written as a ring writes them, and
     * everything is counted and recorded as a ring and drain would.
     *
     * @return whether the request was executed (and completed, successfully or not)
     */
    private boolean sendDirect(SendWorkRequest wr, int length, long seq) {
        Connection c = connection;
        if (c == null || state != QpState.READY || stalled || !LOCK.compareAndSet(this, 0, 1)) {
            return false;
        }
        try {
            if ((long) EXECUTED.getOpaque(this) != seq || state != QpState.READY) {
                // Earlier work still runs (in flight over UCX) and goes first, through the queue; or the queue pair
                // failed since the look above, and the queue's drain flushes the request.
                return false;
            }
            WorkRequestEvent event = new WorkRequestEvent();
            event.begin();
            if (!c.sendDirect(seq, wr, length)) {
                return false;
            }
            if (event.shouldCommit()) {
                executedDirect(event, c, seq, wr, length);
            }
            publishPosted(seq, wr.signaled());
            EXECUTED.setRelease(this, seq + 1);
        } finally {
            LOCK.setRelease(this, 0);
        }
        meter.doorbell(false);
        DoorbellRungEvent rung = new DoorbellRungEvent();
        if (rung.shouldCommit()) {
            rung(rung);
        }
        DoorbellNoticedEvent noticed = new DoorbellNoticedEvent();
        if (noticed.shouldCommit()) {
            noticed(noticed, seq, 1, false);
        }
        return true;
    }

    private void executedDirect(WorkRequestEvent event, Connection c, long index, SendWorkRequest wr, int length) {
        event.queuePair = qpn;
        event.queuePairToken = token;
        event.sequence = index;
        event.opcode = wr.opcode().name();
        event.bytes = length;
        event.transport = transportName;
        event.outcome = Connection.Outcome.DONE.name();
        event.peerToken = peerToken;
        event.peerReceive = c.lastPeerReceive();
        event.commit();
    }

    @Override
    public SendRequest prepareSend(SendWorkRequest wr) {
        java.util.Objects.requireNonNull(wr, "wr must not be null");
        requireSendable();
        int length = encoder.checkSend(wr);
        checkSpace(wr.signaled());
        long seq = sqProduced;
        encoder.writeWqe(wqe(seq), wr, length);
        SQ_PRODUCED.setRelease(this, seq + 1);
        if (wr.signaled()) {
            signaledPrepared++;
        }
        MemopBatch ring = MemopBatch.of(
                new Memop.Write32(dbrecWord, (int) (seq + 1), true),
                new Memop.Write64(doorbellWord, doorbellValue(seq), false, doorbellCall));
        return new SwSendRequest(this, seq, ring, wr.signaled());
    }

    @Override
    public WaitRequest prepareWaitCq(CompletionQueue cq) {
        java.util.Objects.requireNonNull(cq, "cq must not be null");
        if (cq != sendCq && cq != recvCq) {
            throw new IllegalArgumentException(cq.name() + " is not a completion queue of queue pair " + qpn);
        }
        return cq.prepareWait();
    }

    @Override
    public int sendQueueFree() {
        return (int) (config.sendDepth() - ((long) SQ_PRODUCED.getAcquire(this) - (long) EXECUTED.getAcquire(this)));
    }

    @Override
    public int recvQueueFree() {
        return receiveQueue.free();
    }

    /** The doorbell value: this queue pair's number and the new producer index, as a ctrl segment would carry. */
    private long doorbellValue(long seq) {
        return ((long) qpn << 32) | ((seq + 1) & 0xffffffffL);
    }

    private void requireNotClosed() {
        if (state == QpState.CLOSED) {
            throw new IllegalStateException("queue pair " + qpn + " is closed");
        }
    }

    private void requireSendable() {
        QpState s = state;
        if (s == QpState.RESET) {
            throw new IllegalStateException("queue pair " + qpn + " is not connected: call connect(peer endpoint) first");
        }
        if (s == QpState.CLOSED) {
            throw new IllegalStateException("queue pair " + qpn + " is closed");
        }
    }

    private void checkSpace(boolean signaled) {
        long ex = (long) EXECUTED.getAcquire(this);
        if (sqProduced - ex >= config.sendDepth()) {
            throw new QueueFullException("send queue of QP " + qpn + " is full: " + config.sendDepth()
                    + " requests not yet executed (prepared requests wait for their executor to ring them)");
        }
        // One entry stays free for the error completion of an unsignaled request.
        if (signaled && signaledPrepared - sendCq.polled() >= config.sendCqDepth() - 1) {
            throw new QueueFullException("send CQ of QP " + qpn + " is full: " + (signaledPrepared - sendCq.polled())
                    + " signaled completions not yet reaped: poll the send CQ first");
        }
    }

    // ---- post order (called through SwSendRequest) ----

    void checkPostOrder(SwSendRequest r, int earlierInBatch, SendExecutor executorRef) {
        long next = sqPosted + earlierInBatch;
        if (r.sequence() != next) {
            throw new IllegalStateException("send request #" + r.sequence() + " of QP " + qpn
                    + " posted out of prepare order: request #" + next + " must be posted first");
        }
        // Sends posted to another executor must all be rung (a CPU post rings at once; over UCX it may still be
        // in flight, which is fine: what matters is the order of the rings).
        if (boundExecutor != null && boundExecutor != executorRef && dbrecWord.getAcquire32() != (int) sqPosted) {
            throw new IllegalStateException("queue pair " + qpn + " has sends posted to " + boundExecutor
                    + " that are not rung yet; post request #" + r.sequence() + " to the same executor, or after they ran");
        }
    }

    /** Takes back request {@code sequence}, the last one prepared and not posted; CPU thread. */
    void cancelPrepared(long sequence, boolean signaled) {
        if (sqProduced != sequence + 1 || sqPosted != sequence) {
            throw new IllegalStateException("send request #" + sequence + " of QP " + qpn + " cannot be cancelled: "
                    + (sqPosted > sequence ? "it was posted" : "request #" + (sqProduced - 1) + " was prepared after it"));
        }
        // Not rung, so no executor looks at it: the doorbell record stays at or below sqPosted.
        SQ_PRODUCED.setRelease(this, sequence);
        if (signaled) {
            signaledPrepared--;
        }
    }

    void posted(SendExecutor executorRef) {
        sqPosted++;
        boundExecutor = executorRef;
    }

    void expectStoreRing(long sequence) {
        if (storeRingExpected < sequence + 1) {
            storeRingExpected = sequence + 1;
        }
        nic.wakeAgent();
    }

    /** The send queue entry of request {@code sequence} as a template; one buffer, not INLINE. */
    WqeTemplate template(long sequence) {
        long w = wqe(sequence);
        int flags = seg.get(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS);
        int sges = seg.get(JAVA_BYTE, w + Layouts.Wqe.OFF_NUM_SGE);
        if ((flags & SendFlags.INLINE) != 0 || sges != 1) {
            throw new IllegalStateException("send request #" + sequence + " of QP " + qpn + " cannot be a template: it needs"
                    + " exactly one local buffer and no INLINE payload (it has " + sges + " buffers"
                    + ((flags & SendFlags.INLINE) != 0 ? ", INLINE)" : ")"));
        }
        long sge = Layouts.Wqe.OFF_DATA;
        return new WqeTemplate(MemoryWord.word64(seg, w, "send queue entry #" + sequence + " of QP " + qpn),
                (int) (sge + Layouts.Sge.OFF_ADDR), (int) (sge + Layouts.Sge.OFF_LKEY), (int) (sge + Layouts.Sge.OFF_LENGTH),
                (int) Layouts.Wqe.OFF_LENGTH, (int) Layouts.Wqe.OFF_REMOTE_ADDR, (int) Layouts.Wqe.OFF_RKEY);
    }

    boolean isExecuted(long sequence) {
        return (long) EXECUTED.getAcquire(this) > sequence;
    }

    // ---- execution ----

    /** Rings by a call: runs the rung work on this thread unless another executor holds the lock. */
    public void ring() {
        DoorbellRungEvent event = new DoorbellRungEvent();
        if (event.shouldCommit()) {
            rung(event);
        }
        runRung(false);
    }

    // The events' fields are filled in methods of their own, off the hot methods: their bytecode would count against
    // the JIT's inlining budget of every caller even when the event is disabled.

    private void rung(DoorbellRungEvent event) {
        event.provider = "swnic";
        event.queuePair = qpn;
        event.queuePairToken = token;
        event.producerIndex = dbrecWord.getAcquire32() & 0xffffffffL;
        event.commit();
    }

    /**
     * Runs rung work until none is left. A thread that finds the lock taken leaves its work to the
     * holder, so every holder checks the doorbell record again after unlocking.
     *
     * @param byAgent whether the caller is the NIC's agent (else a thread that rang, inline)
     * @return 1 if this thread ran work to the end, 0 if it found the lock taken or the head request stalled
     */
    private int runRung(boolean byAgent) {
        int ran = 0;
        for (;;) {
            if (!LOCK.compareAndSet(this, 0, 1)) {
                return ran;
            }
            // The drain counted and recorded here, not in a method of its own: one more call level kept the JIT from
            // inlining the drain into this loop.
            DoorbellNoticedEvent event = new DoorbellNoticedEvent();
            event.begin();
            long first = (long) EXECUTED.getOpaque(this);
            boolean stuck;
            int took;
            try {
                handed = 0;
                stuck = drain();
                took = handed;
            } finally {
                LOCK.setRelease(this, 0);
            }
            if (took > 0) {
                meter.doorbell(byAgent);
                if (event.shouldCommit()) {
                    noticed(event, first, took, byAgent);
                }
            }
            if (stuck) {
                return 0;
            }
            ran = 1;
            if (dbrecWord.getAcquire32() == (int) (long) EXECUTED.getAcquire(this)) {
                return ran;
            }
        }
    }

    /**
     * The agent's poll: runs work rung by plain stores, and retries a stalled send.
     *
     * <p>A doorbell record that moved may have been rung by a call whose ringer is about to run the
     * work itself; the agent leaves such work alone for {@link #RING_GRACE_NANOS} so that it never
     * races a ringer (and never steals a core from it). Work whose plain-store ring was announced
     * it runs at once, and a stalled send as soon as its connection says a retry may go through
     * ({@link Connection#stallMayClear}), not at every pass.
     *
     * @param now the agent's clock
     * @return 1 if work ran, else 0
     */
    int agentPoll(long now) {
        if (state == QpState.CLOSED) {
            return 0;
        }
        int db = dbrecWord.getAcquire32();
        long ex = (long) EXECUTED.getAcquire(this);
        if (db == (int) ex) {
            return 0;
        }
        if (stalled) {
            Connection c = connection;
            if (c != null && !c.stallMayClear(now)) {
                return 0;
            }
        } else if (storeRingExpected <= ex) {
            if (db != agentSeenDbrec) {
                agentSeenDbrec = db;
                agentSeenAt = now;
                return 0;
            }
            if (now - agentSeenAt < RING_GRACE_NANOS) {
                return 0;
            }
        }
        return runRung(true);
    }

    /**
     * Runs rung work on the calling thread (a host thread playing a kernel, right after its plain-store
     * ring, or between looks while it waits). Work is run under the queue pair's lock, so this never races a
     * ringer or the agent; a stalled head is retried here as {@link #retryStalledHere} allows.
     *
     * @return 1 if work ran, else 0
     */
    int runStoreRing() {
        if (state == QpState.CLOSED) {
            return 0;
        }
        if (stalled) {
            return retryStalledHere();
        }
        if (dbrecWord.getAcquire32() == (int) (long) EXECUTED.getAcquire(this)) {
            return 0;
        }
        return runRung(false);
    }

    /**
     * A poll of one of this queue pair's completion queues found nothing (its owner's thread, waiting or testing on
     * the CPU): that thread retries the stalled head send itself ({@link #retryStalledHere}), then progresses the
     * NIC's transports. Without it the owner would wait for the agent to notice the peer's receive: a hand-off to
     * another thread, which parks between its looks.
     */
    private void polledEmpty() {
        if (stalled) {
            retryStalledHere();
        }
        nic.pollTransports();
    }

    /**
     * Retries the stalled head request on the calling thread when the connection lets threads other than the agent
     * retry ({@link Connection#retriesOnPollers}: shared memory) and says a retry may go through now
     * ({@link Connection#stallMayClear}: the peer posted a receive, or the receiver-not-ready timeout ran out, which
     * the retry then reports). It runs under the execution lock like every executor, so the agent, streams and
     * ringers never execute this queue pair at once, and requests still run in queue order.
     *
     * @return 1 if work ran to the end, else 0
     */
    private int retryStalledHere() {
        Connection c = connection;
        if (c == null || state == QpState.CLOSED || !c.retriesOnPollers() || !c.stallMayClear(System.nanoTime())) {
            return 0;
        }
        return runRung(false);
    }

    /** @return whether the agent should poll eagerly for this queue pair */
    boolean needsHotPolling() {
        return stalled || storeRingExpected > (long) EXECUTED.getAcquire(this);
    }

    /** @return whether the head request waits for the peer to post a receive (or to connect) */
    boolean isStalled() {
        return stalled;
    }

    private void noticed(DoorbellNoticedEvent event, long first, int took, boolean byAgent) {
        event.provider = "swnic";
        event.queuePair = qpn;
        event.queuePairToken = token;
        event.firstRequest = first;
        event.requests = took;
        event.noticedBy = byAgent ? "agent" : "inline";
        event.commit();
    }

    private void executed(WorkRequestEvent event, Connection c, long index, Connection.Outcome outcome) {
        long w = wqe(index);
        event.queuePair = qpn;
        event.queuePairToken = token;
        event.sequence = index;
        event.opcode = opcodeName(seg.get(JAVA_BYTE, w + Layouts.Wqe.OFF_OPCODE) & 0xff);
        event.bytes = seg.get(JAVA_INT, w + Layouts.Wqe.OFF_LENGTH);
        event.transport = transportName;
        event.outcome = outcome.name();
        event.peerToken = peerToken;
        event.peerReceive = outcome == Connection.Outcome.STALLED ? -1 : c.lastPeerReceive();
        event.commit();
    }

    private static String opcodeName(int code) {
        try {
            return Opcode.ofCode(code).name();
        } catch (IllegalArgumentException e) {
            return "opcode " + code;
        }
    }

    /**
     * Executes every rung, unexecuted request in order. Caller holds the lock.
     *
     * @return true if the head request is stalled (the peer posted no receive yet) or in flight
     */
    private boolean drain() {
        Connection c = connection;
        for (;;) {
            if (c != null && c.inFlight()) {
                return true; // its answer continues the drain
            }
            long ex = (long) EXECUTED.getOpaque(this);
            int pending = dbrecWord.getAcquire32() - (int) ex;
            // A doorbell record behind the executed index is a late ring of already-run work; one ahead
            // of what was written is clamped to what exists.
            pending = (int) Math.min(pending, (long) SQ_PRODUCED.getAcquire(this) - ex);
            if (pending <= 0) {
                if (stalled) {
                    stalled = false;
                }
                return false;
            }
            for (int i = 0; i < pending; i++) {
                long index = ex + i;
                if (state != QpState.READY) {
                    flushWqe(index);
                } else {
                    WorkRequestEvent event = new WorkRequestEvent();
                    event.begin();
                    Connection.Outcome outcome = c.execute(index);
                    if (event.shouldCommit()) {
                        executed(event, c, index, outcome);
                    }
                    if (outcome == Connection.Outcome.STALLED) {
                        rnrRetry(index);
                        stalled = true;
                        return true;
                    }
                    handed++;
                    if (outcome == Connection.Outcome.IN_FLIGHT) {
                        if (stalled) {
                            stalled = false;
                        }
                        return true; // its answer continues the drain
                    }
                }
                EXECUTED.setRelease(this, index + 1);
            }
            if (stalled) {
                stalled = false;
            }
        }
    }

    private void flushWqe(long index) {
        long w = layout.sq + (index & sqMask) * Layouts.Wqe.SIZE;
        int flags = seg.get(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS);
        ErrorDetail head = pendingHeadError;
        if (head != null) {
            pendingHeadError = null;
            completeSend(index, CompletionStatus.RETRY_EXC_ERR, head, 0, true);
        } else if ((flags & SendFlags.SIGNALED) != 0) {
            completeSend(index, CompletionStatus.WR_FLUSH_ERR, ErrorDetail.FLUSHED, 0, true);
        }
    }

    /**
     * Writes the send CQE of request {@code index} if it is signaled or failed. Caller holds the lock.
     *
     * @param index      the request
     * @param status     how it ended
     * @param detail     why, when it failed
     * @param byteLength its byte count
     * @param force      write it even if the request is unsignaled (an error always is)
     */
    public void completeSend(long index, CompletionStatus status, ErrorDetail detail, int byteLength, boolean force) {
        long w = layout.sq + (index & sqMask) * Layouts.Wqe.SIZE;
        int flags = seg.get(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS);
        meter.requestDone(byteLength, status);
        if (!force && status == CompletionStatus.SUCCESS && (flags & SendFlags.SIGNALED) == 0) {
            return;
        }
        writeSendCqe(index, seg.get(JAVA_LONG, w + Layouts.Wqe.OFF_WR_ID),
                Opcode.ofCode(seg.get(JAVA_BYTE, w + Layouts.Wqe.OFF_OPCODE) & 0xff), status, detail, byteLength);
    }

    /**
     * {@link #completeSend} for a request executed by {@link Connection#sendDirect}, whose send queue entry was not
     * written: its fields come from the work request. Caller holds the lock.
     *
     * @param index      the request
     * @param wr         its work request
     * @param status     how it ended
     * @param detail     why, when it failed
     * @param byteLength its byte count
     */
    public void completeDirectSend(long index, SendWorkRequest wr, CompletionStatus status, ErrorDetail detail,
                                   int byteLength) {
        meter.requestDone(byteLength, status);
        if (status == CompletionStatus.SUCCESS && !wr.signaled()) {
            return;
        }
        writeSendCqe(index, wr.wrId(), wr.opcode(), status, detail, byteLength);
    }

    /**
     * {@link #failRequest} for a request executed by {@link Connection#sendDirect}: the error state, then its error
     * CQE from the work request's fields. Caller holds the lock.
     *
     * @param index  the request
     * @param wr     its work request
     * @param status its status
     * @param detail why
     */
    public void failDirectSend(long index, SendWorkRequest wr, CompletionStatus status, ErrorDetail detail) {
        enterError(detail);
        completeDirectSend(index, wr, status, detail, 0);
    }

    private void writeSendCqe(long index, long wrId, Opcode op, CompletionStatus status, ErrorDetail detail,
                              int byteLength) {
        long cqe = sendCqProduced++;
        if (status == CompletionStatus.SUCCESS && (long) EXECUTED.get(this) <= index) {
            // Executed before its CQE is visible: whoever reaps the CQE sees the request executed (the drain would
            // say so only once the connection's execute returned, after it wrote the CQE).
            EXECUTED.setRelease(this, index + 1);
        }
        // Begun before the write: the event's time is the moment the CQE became visible, not when it was committed.
        CompletionWrittenEvent event = new CompletionWrittenEvent();
        event.begin();
        sendCq.write(cqe, wrId, byteLength, 0, false, qpn, CompletionOpcode.of(op), status, detail, index);
        if (event.shouldCommit()) {
            written(event, cqe, op, status, byteLength, wrId);
        }
    }

    private void written(CompletionWrittenEvent event, long cqe, Opcode op, CompletionStatus status, int byteLength, long wrId) {
        event.provider = "swnic";
        event.queuePair = qpn;
        event.queuePairToken = token;
        event.queue = "send";
        event.index = cqe;
        event.opcode = CompletionOpcode.of(op).name();
        event.status = status.name();
        event.bytes = byteLength;
        event.wrId = wrId;
        event.commit();
    }

    /**
     * Fails request {@code index}: moves the queue pair to the error state, then writes the request's error CQE,
     * so that whoever reaps the CQE finds the queue pair failed already. Caller holds the execution lock.
     *
     * @param index  the request
     * @param status its status
     * @param detail why
     */
    public void failRequest(long index, CompletionStatus status, ErrorDetail detail) {
        enterError(detail);
        completeSend(index, status, detail, 0, true);
    }

    /**
     * @param index a request
     * @return the offset of its send queue entry in {@link #segment()}
     */
    public long wqe(long index) {
        return layout.sq + (index & sqMask) * Layouts.Wqe.SIZE;
    }

    // ---- errors ----

    /**
     * Moves to the error state (once), tells the peer through the connection, and flushes posted receives; sends
     * flush as they are drained.
     *
     * @param detail why
     */
    public void enterError(ErrorDetail detail) {
        synchronized (flushLock) {
            if (state != QpState.READY && state != QpState.RESET) {
                return;
            }
            errorDetail = detail;
            INT.setRelease(seg, Layouts.Qp.OFF_ERROR_DETAIL, detail.code());
            setState(QpState.ERROR);
        }
        FailureEvent.record("queue pair " + qpn + " of " + nic.name(), "ERROR", detail.text());
        Connection c = connection;
        if (c != null) {
            c.queuePairFailed();
        }
        flushReceives();
    }

    /** The peer is gone or broken: error the queue pair and fail every outstanding request. */
    void peerGone(ErrorDetail why) {
        if (state != QpState.READY) {
            return;
        }
        synchronized (flushLock) {
            if (state != QpState.READY) {
                return;
            }
            errorDetail = why;
            INT.setRelease(seg, Layouts.Qp.OFF_ERROR_DETAIL, why.code());
            // The head send gets the reason, the rest a flush. Set before the state: an executor draining now flushes
            // as soon as it sees the error state, and the first request it flushes must carry the reason.
            if (dbrecWord.getAcquire32() != (int) (long) EXECUTED.getOpaque(this)) {
                pendingHeadError = why;
            }
            setState(QpState.ERROR);
        }
        FailureEvent.record("queue pair " + qpn + " of " + nic.name(), "ERROR", why.text());
        // Drain under the lock so no executor races us.
        lockExecution();
        try {
            Connection c = connection;
            if (c != null) {
                c.abandon();
            }
            drain();
            pendingHeadError = null;
        } finally {
            unlockExecution();
        }
        flushReceives();
    }

    /**
     * Flushes the posted receives no executor has claimed, and those claimed that the connection says will never
     * finish (the peer died mid-copy; a transfer over UCX that ended with the peer).
     */
    private void flushReceives() {
        synchronized (flushLock) {
            if (state == QpState.CLOSED) {
                return; // its file may be unmapped already
            }
            Connection c = connection;
            receiveQueue.flush(errorDetail, c == null ? null : c.unfinishedReceives(errorDetail));
        }
    }

    /**
     * Completes a receive of this queue pair that the executor of a request from the peer claimed here (requests
     * that arrive over UCX), unless the queue pair has left the ready state meanwhile (its unfinished receives were
     * flushed then, and must not complete twice).
     *
     * @param slot   the claimed receive entry
     * @param wrId   its work request id
     * @param length the bytes that arrived
     * @param imm    the immediate value
     * @param hasImm whether there is one
     * @param opcode what completed
     * @param status how
     * @param detail why, when it failed
     * @return whether it completed
     */
    public boolean completeReceiveWhileReady(long slot, long wrId, int length, int imm, boolean hasImm,
                                             CompletionOpcode opcode, CompletionStatus status, ErrorDetail detail) {
        synchronized (flushLock) {
            if (state != QpState.READY) {
                return false;
            }
            receiveSlots.complete(slot, wrId, length, imm, hasImm, opcode, status, detail);
            return true;
        }
    }

    @Override
    public void abort(ErrorDetail reason) {
        Objects.requireNonNull(reason, "reason must not be null");
        if (state == QpState.RESET) {
            enterError(reason);
            return;
        }
        if (state != QpState.READY) {
            return;
        }
        peerGone(reason);
        Connection c = connection;
        if (c != null) {
            c.queuePairFailed();
        }
    }

    /**
     * Sweep step of the agent: notices a peer that died, closed or broke. A queue pair already in the error state
     * (aborted when the job failed, say) may still hold receives the peer had claimed when it died mid-copy: those
     * complete once the peer is known dead, so no wait on them is left without an end.
     */
    void checkPeer() {
        Connection c = connection;
        if (c == null) {
            return;
        }
        QpState s = state;
        if (s == QpState.READY) {
            ErrorDetail why = c.checkPeer(System.nanoTime());
            if (why != null) {
                peerGone(why);
            }
        } else if (s == QpState.ERROR && !claimedReceivesFlushed && c.unfinishedReceives(errorDetail) != null) {
            claimedReceivesFlushed = true;
            flushReceives();
        }
    }

    private void setState(QpState s) {
        state = s;
        INT.setRelease(seg, Layouts.Qp.OFF_STATE, s.code());
    }

    @Override
    public void close() {
        Connection c;
        synchronized (this) {
            if (state == QpState.CLOSED) {
                return;
            }
            synchronized (flushLock) {
                setState(QpState.CLOSED);
            }
            c = connection;
        }
        nic.forget(this);
        // Wait for any executor to finish and keep the lock: nothing runs on this queue pair again.
        lockExecution();
        arena.close();
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // the directory is removed when the NIC closes
        }
        if (c != null) {
            c.close();
        }
    }

    @Override
    public String toString() {
        Connection c = connection;
        return "QueuePair{" + qpn + ", " + state + (state == QpState.ERROR ? " (" + errorDetail.text() + ")" : "")
                + (c != null ? ", peer " + c : "") + "}";
    }

    /** A prepared send of this queue pair. */
    static final class SwSendRequest extends SendRequest {
        private final SwQueuePair qp;

        SwSendRequest(SwQueuePair qp, long sequence, MemopBatch memops, boolean signaled) {
            super(qp, sequence, memops, signaled);
            this.qp = qp;
        }

        @Override
        public void expectPlainStoreRing() {
            qp.expectStoreRing(sequence());
        }

        @Override
        public boolean isExecuted() {
            return qp.isExecuted(sequence());
        }

        @Override
        public WqeTemplate template() {
            return qp.template(sequence());
        }

        @Override
        protected void checkPostOrder(int earlierInBatch, SendExecutor executorRef) {
            qp.checkPostOrder(this, earlierInBatch, executorRef);
        }

        @Override
        protected void posted(SendExecutor executorRef) {
            qp.posted(executorRef);
        }

        @Override
        protected void cancelPrepared() {
            qp.cancelPrepared(sequence(), signaled());
        }
    }
}
