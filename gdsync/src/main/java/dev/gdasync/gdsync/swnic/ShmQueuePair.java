package dev.gdasync.gdsync.swnic;

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
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.nic.WqeTemplate;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;

import static dev.gdasync.gdsync.swnic.Layouts.INT;
import static dev.gdasync.gdsync.swnic.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A queue pair of the software NIC, in a shared-memory file its peer maps when it runs on this host; a peer on
 * another host reaches it over UCX instead ({@link UcxLink}), its requests executed here by {@link UcxTarget}.
 *
 * <p>Three kinds of thread touch it. The owner's CPU thread posts, prepares and polls (one at a time).
 * An executor runs rung work requests: the thread that rang by a call (CPU post, host stream), or the
 * agent when the doorbell was rung by a plain store; an execution lock makes them take turns, and a
 * ringer that finds the lock taken leaves its work to the holder, which checks the doorbell record
 * again after unlocking. The peer's executor claims entries of this queue pair's receive queue and
 * writes its receive CQEs.
 */
final class ShmQueuePair implements QueuePair {
    private static final VarHandle LOCK;
    private static final VarHandle EXECUTED;
    private static final VarHandle SQ_PRODUCED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            LOCK = l.findVarHandle(ShmQueuePair.class, "lock", int.class);
            EXECUTED = l.findVarHandle(ShmQueuePair.class, "executed", long.class);
            SQ_PRODUCED = l.findVarHandle(ShmQueuePair.class, "sqProduced", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SoftwareNic nic;
    private final int qpn;
    private final QueuePairConfig config;
    private final long token;
    private final Arena arena;
    private final Path file;
    final MemorySegment seg;
    final Layouts.Qp layout;
    private final int sqMask;
    final ShmCompletionQueue sendCq;
    final ShmCompletionQueue recvCq;
    private final WorkRequestEncoder encoder;
    private final ReceiveQueue receiveQueue;
    private final MemoryWord dbrecWord;
    private final MemoryWord doorbellWord;
    private final Doorbell doorbellCall = this::ring;
    private final WqeExecutor executor;
    private final Endpoint endpoint;
    private final Object flushLock = new Object();

    private volatile QpState state = QpState.RESET;
    private volatile ErrorDetail errorDetail = ErrorDetail.NONE;
    volatile RemoteQp remote;
    /** The connection over UCX, when the peer is reached that way ({@link #remote} is then null). */
    private volatile UcxLink ucxLink;
    /** This queue pair as a peer's executor sees it, for requests that arrive over UCX; made on first use. */
    private volatile RemoteQp selfView;
    private RemoteNode selfNode;

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
    private ErrorDetail pendingHeadError;
    private volatile boolean stalled;
    private volatile long storeRingExpected;

    /** How long the agent leaves freshly rung work to the thread that rang it. */
    static final long RING_GRACE_NANOS = 50_000;
    // Agent thread only.
    private int agentSeenDbrec;
    private long agentSeenAt;

    ShmQueuePair(SoftwareNic nic, int qpn, QueuePairConfig config, long token) {
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
        this.dbrecWord = MemoryWord.word32(seg, Layouts.Qp.OFF_DBREC, "doorbell record of QP " + qpn);
        this.doorbellWord = MemoryWord.word64(seg, Layouts.Qp.OFF_DOORBELL, "doorbell of QP " + qpn);
        this.sendCq = new ShmCompletionQueue("send CQ of QP " + qpn, seg, layout.sendCq, layout.sendRelease,
                config.sendCqDepth(), () -> signaledPrepared, "signaled sends", nic::pollTransport, nic.waitProgress());
        this.recvCq = new ShmCompletionQueue("recv CQ of QP " + qpn, seg, layout.recvCq, layout.recvRelease,
                config.recvDepth(), this::receivesPosted, "receives posted", nic::pollTransport, nic.waitProgress());
        this.encoder = new WorkRequestEncoder(nic, seg);
        this.receiveQueue = new ReceiveQueue(qpn, seg, layout.rq, config.recvDepth(), recvCq, encoder);
        this.executor = new WqeExecutor(this);
        this.endpoint = ownEndpoint().encode();
    }

    private ShmEndpoint ownEndpoint() {
        return new ShmEndpoint(nic.directory().processDirectory(), ProcessHandle.current().pid(), nic.startMillis(), qpn,
                token, config.sendDepth(), config.recvDepth(), config.sendCqDepth(), HostIdentity.current(),
                nic.ucxAddress());
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

    long token() {
        return token;
    }

    @Override
    public CompletionQueue sendCq() {
        return sendCq;
    }

    @Override
    public CompletionQueue recvCq() {
        return recvCq;
    }

    @Override
    public synchronized void connect(Endpoint remoteEndpoint) {
        if (state == QpState.CLOSED) {
            throw new IllegalStateException("queue pair " + qpn + " is closed");
        }
        if (remote != null) {
            throw new IllegalStateException("queue pair " + qpn + " is already connected to " + remote);
        }
        ShmEndpoint ep = ShmEndpoint.decode(remoteEndpoint);
        if (ep.token() == token) {
            throw new IllegalArgumentException("queue pair " + qpn + " cannot connect to itself");
        }
        boolean sameHost = ep.hostId().equals(HostIdentity.current());
        Transport transport = nic.config().transport();
        if (transport == Transport.UCX || (transport == Transport.AUTO && !sameHost)) {
            connectOverUcx(ep, sameHost);
            return;
        }
        if (!sameHost) {
            throw new IllegalArgumentException("queue pair " + qpn + " cannot reach its peer over shared memory: the peer runs on"
                    + " another host (" + ep.hostId() + ", this is " + HostIdentity.current() + ") and this NIC's transport is "
                    + "shm; use the ucx or auto transport");
        }
        RemoteNode node = nic.retainRemoteNode(ep);
        RemoteQp r;
        try {
            r = new RemoteQp(node, ep);
        } catch (RuntimeException e) {
            nic.releaseRemoteNode(node);
            throw e;
        }
        LONG.setRelease(seg, Layouts.Qp.OFF_REMOTE_TOKEN, ep.token());
        remote = r;
        if (state == QpState.RESET) {
            setState(QpState.READY);
        }
    }

    private void connectOverUcx(ShmEndpoint ep, boolean sameHost) {
        if (!ep.offersUcx()) {
            throw new IllegalArgumentException("queue pair " + qpn + " cannot reach its peer over UCX: the peer's NIC offers no"
                    + " UCX address (its transport is shm, or UCX is unavailable there)"
                    + (sameHost ? "" : "; the peer runs on another host, so shared memory cannot be used either"));
        }
        UcxNet net = nic.ucx();
        if (net == null) {
            throw new IllegalStateException("queue pair " + qpn + " cannot reach its peer" + (sameHost ? "" : " on another host")
                    + ": " + nic.ucxUnavailableReason());
        }
        UcxLink link = new UcxLink(this, net, net.peer(ep.ucxAddress(), HostIdentity.sameMachine(ep.hostId())), ep);
        LONG.setRelease(seg, Layouts.Qp.OFF_REMOTE_TOKEN, ep.token());
        ucxLink = link;
        if (state == QpState.RESET) {
            setState(QpState.READY);
        }
    }

    /** @return the UCX connection, or null when the peer is reached over shared memory or not connected */
    UcxLink ucxLink() {
        return ucxLink;
    }

    /** @return this queue pair as a peer's executor sees it (for requests that arrive over UCX) */
    RemoteQp selfView() {
        RemoteQp v = selfView;
        if (v == null) {
            synchronized (this) {
                v = selfView;
                if (v == null) {
                    ShmEndpoint own = ownEndpoint();
                    selfNode = nic.retainRemoteNode(own);
                    v = new RemoteQp(selfNode, own);
                    selfView = v;
                }
            }
        }
        return v;
    }

    // ---- the UCX transport's completions (UcxLink) ----

    void lockForTransport() {
        lockExecution();
    }

    void unlockForTransport() {
        LOCK.setRelease(this, 0);
    }

    /** Request {@code index}, in flight over UCX, is complete. Caller holds the execution lock. */
    void transportExecuted(long index) {
        EXECUTED.setRelease(this, index + 1);
        stalled = false;
    }

    /** The request in flight must be sent again (the peer was not ready). Caller holds the execution lock. */
    void transportStalled() {
        stalled = true;
        nic.wakeAgent();
    }

    @Override
    public void postRecv(RecvWorkRequest wr) {
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
    public void postSend(SendWorkRequest wr) {
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
        encoder.writeWqe(wqe(seq), wr, length);
        SQ_PRODUCED.setRelease(this, seq + 1);
        sqPosted = seq + 1;
        if (wr.signaled()) {
            signaledPrepared++;
        }
        dbrecWord.set32((int) (seq + 1), true);
        doorbellWord.set64(doorbellValue(seq), false);
        ring();
    }

    @Override
    public SendRequest prepareSend(SendWorkRequest wr) {
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
        return new ShmSendRequest(this, seq, ring, wr.signaled());
    }

    @Override
    public WaitRequest prepareWaitCq(CompletionQueue cq) {
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

    // ---- post order (called through ShmSendRequest) ----

    void checkPostOrder(ShmSendRequest r, int earlierInBatch, SendExecutor executorRef) {
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
    void ring() {
        runRung();
    }

    /**
     * Runs rung work until none is left. A thread that finds the lock taken leaves its work to the
     * holder, so every holder checks the doorbell record again after unlocking.
     *
     * @return 1 if this thread ran work to the end, 0 if it found the lock taken or the head request stalled
     */
    private int runRung() {
        int ran = 0;
        for (;;) {
            if (!LOCK.compareAndSet(this, 0, 1)) {
                return ran;
            }
            boolean stuck;
            try {
                stuck = drain();
            } finally {
                LOCK.setRelease(this, 0);
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
     * races a ringer (and never steals a core from it). Work whose plain-store ring was announced,
     * and stalled sends, it runs at once.
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
        if (!stalled && storeRingExpected <= ex) {
            if (db != agentSeenDbrec) {
                agentSeenDbrec = db;
                agentSeenAt = now;
                return 0;
            }
            if (now - agentSeenAt < RING_GRACE_NANOS) {
                return 0;
            }
        }
        return runRung();
    }

    /**
     * Runs rung work on the calling thread (a host thread playing a kernel, right after its plain-store
     * ring). Work is run under the queue pair's lock, so this never races a ringer or the agent; a stalled
     * head is left to the agent's retry.
     *
     * @return 1 if work ran, else 0
     */
    int runStoreRing() {
        if (state == QpState.CLOSED || stalled) {
            return 0;
        }
        if (dbrecWord.getAcquire32() == (int) (long) EXECUTED.getAcquire(this)) {
            return 0;
        }
        return runRung();
    }

    /** @return whether the agent should poll eagerly for this queue pair */
    boolean needsHotPolling() {
        return stalled || storeRingExpected > (long) EXECUTED.getAcquire(this);
    }

    /**
     * Executes every rung, unexecuted request in order. Caller holds the lock.
     *
     * @return true if the head request is stalled (the peer posted no receive yet) or in flight over UCX
     */
    private boolean drain() {
        UcxLink link = ucxLink;
        for (;;) {
            if (link != null && link.inFlight()) {
                return true; // its response continues the drain
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
                    int result = executor.execute(index);
                    if (result == WqeExecutor.STALLED) {
                        stalled = true;
                        return true;
                    }
                    if (result == WqeExecutor.IN_FLIGHT) {
                        if (stalled) {
                            stalled = false;
                        }
                        return true; // its response continues the drain
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
     */
    void completeSend(long index, CompletionStatus status, ErrorDetail detail, int byteLength, boolean force) {
        long w = layout.sq + (index & sqMask) * Layouts.Wqe.SIZE;
        int flags = seg.get(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS);
        if (!force && status == CompletionStatus.SUCCESS && (flags & SendFlags.SIGNALED) == 0) {
            return;
        }
        long cqe = sendCqProduced++;
        Opcode op = Opcode.ofCode(seg.get(JAVA_BYTE, w + Layouts.Wqe.OFF_OPCODE) & 0xff);
        sendCq.write(cqe, seg.get(JAVA_LONG, w + Layouts.Wqe.OFF_WR_ID), byteLength, 0, false, qpn,
                CompletionOpcode.of(op), status, detail, index);
    }

    /** @return the send queue entry offset of request {@code index} */
    long wqe(long index) {
        return layout.sq + (index & sqMask) * Layouts.Wqe.SIZE;
    }

    // ---- errors ----

    /** Moves to the error state (once) and flushes posted receives; sends flush as they are drained. */
    void enterError(ErrorDetail detail) {
        synchronized (flushLock) {
            if (state != QpState.READY && state != QpState.RESET) {
                return;
            }
            errorDetail = detail;
            INT.setRelease(seg, Layouts.Qp.OFF_ERROR_DETAIL, detail.code());
            setState(QpState.ERROR);
        }
        UcxLink link = ucxLink;
        if (link != null) {
            link.sendEnded(ErrorDetail.PEER_QP_ERROR);
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
            setState(QpState.ERROR);
        }
        // The head send gets the reason, the rest a flush: drain under the lock so no executor races us.
        lockExecution();
        try {
            UcxLink link = ucxLink;
            if (link != null) {
                link.abandon();
            }
            if (dbrecWord.getAcquire32() != (int) (long) EXECUTED.getOpaque(this)) {
                pendingHeadError = why;
            }
            drain();
            pendingHeadError = null;
        } finally {
            LOCK.setRelease(this, 0);
        }
        flushReceives();
    }

    /**
     * Flushes the posted receives no executor has claimed (and, if the peer died, those it never finished; over
     * UCX this NIC's own target claims them, and one waiting for data that will not come is flushed too).
     */
    void flushReceives() {
        synchronized (flushLock) {
            RemoteQp r = remote;
            receiveQueue.flush(errorDetail, ucxLink != null ? errorDetail
                    : r != null && r.node().gone() == ErrorDetail.PEER_DEAD ? ErrorDetail.PEER_DEAD : null);
        }
    }

    /**
     * Completes a receive that this NIC's UCX target claimed, unless the queue pair has left the ready state
     * meanwhile (its unfinished receives were flushed then, and must not complete twice).
     *
     * @return whether it completed
     */
    boolean completeClaimedWhileReady(RemoteQp self, long slot, long wrId, int length, int imm, boolean hasImm,
                                      CompletionOpcode opcode, CompletionStatus status, ErrorDetail detail) {
        synchronized (flushLock) {
            if (state != QpState.READY) {
                return false;
            }
            self.complete(slot, wrId, length, imm, hasImm, opcode, status, detail);
            return true;
        }
    }

    /** Sweep step of the agent: notices a peer that died, closed or broke. */
    void checkPeer() {
        UcxLink link = ucxLink;
        if (link != null) {
            if (state == QpState.READY) {
                long now = System.nanoTime();
                link.heartbeat(now);
                ErrorDetail why = link.sweep(now);
                if (why == null) {
                    why = link.checkLiveness();
                }
                if (why != null) {
                    if (why == ErrorDetail.PEER_UNREACHABLE && link.failureMessage() != null) {
                        SoftwareNic.LOG.log(System.Logger.Level.WARNING, this + ": " + link.failureMessage());
                    }
                    peerGone(why);
                }
            }
            return;
        }
        RemoteQp r = remote;
        if (r == null || state != QpState.READY) {
            return;
        }
        ErrorDetail why = r.unusable();
        if (why == null && r.stateCode() == QpState.READY.code()) {
            long connected = r.connectedToken();
            if (connected != 0 && connected != token) {
                why = ErrorDetail.PEER_QP_ERROR;
            }
        }
        if (why != null) {
            peerGone(why);
        }
    }

    private void setState(QpState s) {
        state = s;
        INT.setRelease(seg, Layouts.Qp.OFF_STATE, s.code());
    }

    private void lockExecution() {
        while (!LOCK.compareAndSet(this, 0, 1)) {
            Thread.onSpinWait();
        }
    }

    @Override
    public void close() {
        RemoteQp r;
        synchronized (this) {
            if (state == QpState.CLOSED) {
                return;
            }
            synchronized (flushLock) {
                setState(QpState.CLOSED);
            }
            r = remote;
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
        if (r != null) {
            nic.releaseRemoteNode(r.node());
        }
        UcxLink link = ucxLink;
        if (link != null) {
            link.sendEnded(ErrorDetail.PEER_CLOSED);
        }
        synchronized (this) {
            if (selfNode != null) {
                nic.releaseRemoteNode(selfNode);
                selfNode = null;
            }
        }
    }

    @Override
    public String toString() {
        UcxLink link = ucxLink;
        return "QueuePair{" + qpn + ", " + state + (state == QpState.ERROR ? " (" + errorDetail.text() + ")" : "")
                + (remote != null ? ", peer " + remote : link != null ? ", peer " + link : "") + "}";
    }

    /** A prepared send of this queue pair. */
    static final class ShmSendRequest extends SendRequest {
        private final ShmQueuePair qp;

        ShmSendRequest(ShmQueuePair qp, long sequence, MemopBatch memops, boolean signaled) {
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
    }
}
