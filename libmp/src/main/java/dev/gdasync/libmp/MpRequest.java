package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.libmp.trace.RequestStateEvent;

/**
 * One communication of an {@link Mp}: a send, a receive, a put or a get (LibMP's {@code mp_request_t}).
 * A handle with a defined life ({@link RequestState}); once released it is dead, and using it again is
 * an error rather than an alias of another request. Not thread-safe: its {@link Mp} drives it.
 *
 * <p>The request makes its own transitions ({@link #posted}, {@link #waitedOnStream}, {@link #complete},
 * {@link #release}, {@link #retire}, {@link #cancel}) and refuses an illegal one with an
 * {@link IllegalStateException} naming the request, its state and the transition. The {@code check*}
 * methods refuse the same without changing anything, so that a caller can check a whole batch before
 * handing any of it to an executor.
 *
 * <p>With the flight recorder on, each state it enters is recorded ({@link RequestStateEvent}).
 */
public final class MpRequest {

    /** What the request does. */
    public enum Kind {
        /** Two-sided send. */
        SEND,
        /** Two-sided receive. */
        RECV,
        /** One-sided RDMA write into a window. */
        PUT,
        /** One-sided RDMA read from a window. */
        GET,
        /** One-sided 64-bit atomic (fetch-and-add or compare-and-swap) on a window word. */
        ATOMIC
    }

    private static final String POST = "post (PREPARED → PENDING_NOWAIT)";
    private static final String WAIT_ON_STREAM = "wait on a stream (PENDING_NOWAIT → PENDING)";

    private final MpContext owner;
    private final long id;
    private final Kind kind;
    private final int peer;
    private final long bytes;
    private final boolean nowait;
    private RequestState state = RequestState.PREPARED;
    /** The prepared send of a request made by a prepare (sends, puts, gets); null when the CPU posted it at once. */
    private SendRequest send;
    /**
     * The prepared wait for its CQE; null for NOWAIT puts, which write none, and until asked for when the CPU posted
     * the request ({@link #waitCq} and {@link #waitIndex} hold its reservation then).
     */
    private WaitRequest wait;
    /** Where the CPU's post reserved its CQE's wait ({@link CompletionQueue#reserveWait()}), else null. */
    private CompletionQueue waitCq;
    /** The reserved CQE's index, with {@link #waitCq}. */
    private long waitIndex;
    /** Whether the CPU released its CQE (it will not be waited on by a stream). */
    private boolean releasedOnCpu;
    /** Its position in its peer's {@link RequestFifo}. */
    private long fifoPosition;
    /** The descriptor queue or KI export holding its send ring, until posted; else null. */
    private Staging stagedSend;
    /** The descriptor queue or KI export holding its completion wait, until posted; else null. */
    private Staging stagedWait;
    private CompletionStatus status;
    private ErrorDetail detail;
    private int received;

    /** A PREPARED request; only its {@link RequestPool} makes them. */
    MpRequest(MpContext owner, long id, Kind kind, int peer, long bytes, boolean nowait) {
        this.owner = owner;
        this.id = id;
        this.kind = kind;
        this.peer = peer;
        this.bytes = bytes;
        this.nowait = nowait;
        RequestStateEvent.record(id, kind, peer, bytes, null, RequestState.PREPARED);
    }

    /** Enters a state, and records the change. */
    private void enter(RequestState next) {
        RequestState from = state;
        state = next;
        RequestStateEvent.record(id, kind, peer, bytes, from, next);
    }

    /** @return what the request does */
    public Kind kind() {
        return kind;
    }

    /** @return the peer rank */
    public int peer() {
        return peer;
    }

    /** @return where the request is in its life */
    public RequestState state() {
        return state;
    }

    /** @return whether it completed (COMPLETE or RELEASED) */
    public boolean isComplete() {
        return state == RequestState.COMPLETE || state == RequestState.RELEASED;
    }

    /** @return the completion status once complete, else null */
    public CompletionStatus status() {
        return status;
    }

    /** @return why it failed once complete ({@link ErrorDetail#NONE} on success), else null */
    public ErrorDetail detail() {
        return detail;
    }

    /** @return for a completed receive, the bytes that arrived; for other kinds, the bytes posted */
    public long byteCount() {
        return kind == Kind.RECV && status != null ? received : bytes;
    }

    /** @return whether this is a NOWAIT put, which nobody waits on */
    public boolean isNowait() {
        return nowait;
    }

    // ---- what the other classes of the package read ----

    /** @return its number, the work request id of its send or receive */
    long id() {
        return id;
    }

    /** @return the prepared send of a request made by a prepare; null for receives and CPU sends */
    SendRequest sendRequest() {
        return send;
    }

    /**
     * @return the prepared wait for its CQE, made now from its reservation if the CPU posted it and no executor
     *         asked for it before; null for NOWAIT puts
     */
    WaitRequest waitRequest() {
        if (wait == null && waitCq != null) {
            wait = waitCq.waitFor(waitIndex);
        }
        return wait;
    }

    /** @return its position in its peer's {@link RequestFifo} */
    long fifoPosition() {
        return fifoPosition;
    }

    // ---- checks: refuse without changing anything ----

    /**
     * @param mp the Mp it is used with
     * @throws IllegalArgumentException if it is another Mp's
     */
    void checkOwner(MpContext mp) {
        if (owner != mp) {
            throw new IllegalArgumentException(this + " belongs to another Mp");
        }
    }

    /**
     * Checks that it may be handed to an executor: {@link #posted()} would succeed.
     *
     * @param mp the Mp it is used with
     * @throws IllegalArgumentException if it is another Mp's
     * @throws IllegalStateException    if it is not PREPARED
     */
    void checkPostable(MpContext mp) {
        checkOwner(mp);
        if (state != RequestState.PREPARED) {
            throw new IllegalStateException(describe() + " is " + state + ", not PREPARED: only a prepared"
                    + " request can be posted");
        }
    }

    /**
     * Checks that it may be waited on (by the CPU or, with {@link #checkStreamWaitable}, by a stream).
     *
     * @param mp the Mp it is used with
     * @throws IllegalArgumentException if it is another Mp's
     * @throws IllegalStateException    if it was released, was never posted or is a NOWAIT put
     */
    void checkWaitable(MpContext mp) {
        checkOwner(mp);
        switch (state) {
            case RELEASED -> throw new IllegalStateException(describe() + " was already completed and released:"
                    + " a request is waited on once");
            case PREPARED -> throw new IllegalStateException(describe() + " is prepared but was never posted");
            default -> {
                if (nowait) {
                    throw new IllegalStateException(describe() + " is a NOWAIT put: it writes no completion and"
                            + " releases itself once executed");
                }
            }
        }
    }

    /**
     * Checks that a stream (or kernel) may wait for its completion: {@link #waitedOnStream()} would succeed.
     *
     * @param mp the Mp it is used with
     * @throws IllegalArgumentException if it is another Mp's
     * @throws IllegalStateException    if it cannot be waited on, or its completion already is
     */
    void checkStreamWaitable(MpContext mp) {
        checkWaitable(mp);
        if (state == RequestState.PENDING) {
            throw new IllegalStateException(describe() + " is already waited on by a stream");
        }
        if (wait != null && wait.state() != WaitRequest.State.PREPARED) {
            throw new IllegalStateException("the completion of " + describe() + " is already waited on");
        }
    }

    // ---- transitions ----

    /**
     * Takes what the NIC prepared for it, staying PREPARED: the send that an executor will ring, and the
     * wait for its CQE (null for a NOWAIT put).
     */
    void prepared(SendRequest send, WaitRequest wait) {
        requireState(RequestState.PREPARED, "be prepared again");
        this.send = send;
        this.wait = wait;
    }

    /** Records its place in its peer's {@link RequestFifo}. */
    void queuedAt(long position) {
        fifoPosition = position;
    }

    /** PREPARED → PENDING_NOWAIT: an executor (the CPU, a stream, a kernel) took its prepared send. */
    void posted() {
        requireState(RequestState.PREPARED, POST);
        enter(RequestState.PENDING_NOWAIT);
    }

    /**
     * PREPARED → PENDING_NOWAIT for a send or receive the CPU posted at once ({@code isend}, {@code irecv}). Its
     * wait is only reserved: the CPU that waits for it releases the CQE by index, and the wait object is made when a
     * stream or kernel asks for it ({@link #waitRequest()}).
     *
     * @param cq    the completion queue of its CQE
     * @param index the CQE's reserved index ({@link CompletionQueue#reserveWait()})
     */
    void posted(CompletionQueue cq, long index) {
        requireState(RequestState.PREPARED, POST);
        this.waitCq = cq;
        this.waitIndex = index;
        enter(RequestState.PENDING_NOWAIT);
    }

    /**
     * PENDING_NOWAIT → PENDING: a stream or kernel took the wait for its completion. A request whose
     * completion the CPU reaped already stays COMPLETE: that stream's wait passes at once.
     */
    void waitedOnStream() {
        if (state == RequestState.PENDING_NOWAIT) {
            enter(RequestState.PENDING);
        } else if (state != RequestState.COMPLETE) {
            throw illegal(WAIT_ON_STREAM);
        }
    }

    /**
     * Releases its CQE to the CPU if nobody waits on it on a stream: a PENDING_NOWAIT request is from
     * now on waited on by the CPU; a PENDING one keeps its CQE for its stream.
     */
    void releaseOnCpu() {
        if (state == RequestState.PENDING_NOWAIT && !releasedOnCpu) {
            if (wait != null) {
                wait.releaseOnCpu();
            } else {
                waitCq.releaseOnCpu(waitIndex);
            }
            releasedOnCpu = true;
        }
    }

    /** PENDING_NOWAIT or PENDING → COMPLETE: its CQE was reaped; records what it says. */
    void complete(Completion c) {
        if (state != RequestState.PENDING_NOWAIT && state != RequestState.PENDING) {
            throw illegal("complete (→ COMPLETE)");
        }
        status = c.status();
        detail = c.detail();
        received = c.byteLength();
        enter(RequestState.COMPLETE);
    }

    /** A NOWAIT put that failed wrote an error CQE of its own: records it; the put retires as usual. */
    void failed(Completion c) {
        if (!nowait || state != RequestState.PENDING_NOWAIT) {
            throw illegal("fail as a NOWAIT put");
        }
        status = c.status();
        detail = c.detail();
    }

    /** COMPLETE → RELEASED: waited for (or tested) and released; the handle is dead. */
    void release() {
        requireState(RequestState.COMPLETE, "release (COMPLETE → RELEASED)");
        enter(RequestState.RELEASED);
    }

    /**
     * PENDING_NOWAIT → RELEASED for a NOWAIT put the NIC executed: nobody waits on it, so it releases
     * itself, SUCCESS unless an error CQE said otherwise ({@link #failed}).
     */
    void retire() {
        if (!nowait || state != RequestState.PENDING_NOWAIT) {
            throw illegal("retire as an executed NOWAIT put (PENDING_NOWAIT → RELEASED)");
        }
        if (status == null) {
            status = CompletionStatus.SUCCESS;
        }
        enter(RequestState.RELEASED);
    }

    /** PREPARED → RELEASED: the NIC refused its work request, so it never existed for anybody. */
    void cancel() {
        requireState(RequestState.PREPARED, "cancel (PREPARED → RELEASED)");
        enter(RequestState.RELEASED);
    }

    /**
     * Puts its send ring ({@code send}) or its completion wait into a descriptor queue or KI export, which
     * will post it; until then the request stays as it is.
     *
     * @param mp   the Mp of the queue or export
     * @param to   the queue or export
     * @param send its send ring, else its completion wait
     * @throws IllegalArgumentException if it is another Mp's
     * @throws IllegalStateException    if that part cannot be posted, or is already in a queue or export
     */
    void stage(MpContext mp, Staging to, boolean send) {
        if (send) {
            checkPostable(mp);
            if (stagedSend != null) {
                throw new IllegalStateException(describe() + " is already in " + Staging.nameOf(stagedSend, to));
            }
            stagedSend = to;
            return;
        }
        if (state == RequestState.PREPARED && stagedSend == to) {
            // Its send is in the same batch, ahead of this wait.
            checkOwner(mp);
        } else {
            checkStreamWaitable(mp);
        }
        if (wait == null && waitCq == null) {
            throw new IllegalStateException(describe() + " is a NOWAIT put: it writes no completion to wait for");
        }
        if (stagedWait != null) {
            throw new IllegalStateException("the completion of " + describe() + " is already in "
                    + Staging.nameOf(stagedWait, to));
        }
        stagedWait = to;
    }

    /**
     * Checks, without changing anything, that posting a queue or export that holds a part of this request
     * may move it on: {@link #unstage} then {@link #posted} (its send) or {@link #waitedOnStream} (its
     * wait) would succeed. A request can have been posted, waited on or released directly since it was
     * staged.
     *
     * @throws IllegalStateException if that part is not in {@code from}, or the request cannot move on
     */
    void checkStagedPost(Staging from, boolean send) {
        requireStaged(from, send);
        if (send) {
            requireState(RequestState.PREPARED, POST);
        } else if (state != RequestState.PENDING_NOWAIT && state != RequestState.COMPLETE
                && !(state == RequestState.PREPARED && stagedSend == from)) {
            throw illegal(WAIT_ON_STREAM);
        }
    }

    /**
     * Takes its send ring or completion wait out of a queue or export (cleared, or posted).
     *
     * @throws IllegalStateException if that part is not in {@code from}
     */
    void unstage(Staging from, boolean send) {
        requireStaged(from, send);
        if (send) {
            stagedSend = null;
        } else {
            stagedWait = null;
        }
    }

    /**
     * @throws MpException if it completed with an error
     */
    void throwIfFailed() {
        if (status != CompletionStatus.SUCCESS) {
            throw new MpException(describe() + " failed: " + status + " (" + detail.text() + ")", status, detail);
        }
    }

    private void requireStaged(Staging in, boolean send) {
        Staging held = send ? stagedSend : stagedWait;
        if (held != in) {
            throw new IllegalStateException("the " + (send ? "send" : "completion wait") + " of " + describe()
                    + (held == null ? " is in no descriptor queue or KI export: it was posted, written or cleared already"
                    : " is in another descriptor queue or KI export"));
        }
    }

    private void requireState(RequestState expected, String transition) {
        if (state != expected) {
            throw illegal(transition);
        }
    }

    private IllegalStateException illegal(String transition) {
        return new IllegalStateException(describe() + " is " + state + ": cannot " + transition);
    }

    String describe() {
        String what = switch (kind) {
            case SEND -> "send to rank " + peer;
            case RECV -> "receive from rank " + peer;
            case PUT -> "put to rank " + peer;
            case GET -> "get from rank " + peer;
            case ATOMIC -> "atomic on rank " + peer;
        };
        return what + " (request #" + id + ", " + bytes + " bytes)";
    }

    @Override
    public String toString() {
        return "MpRequest{" + describe() + ", " + state + (status != null ? ", " + status : "") + "}";
    }
}
