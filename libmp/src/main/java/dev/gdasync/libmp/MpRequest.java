package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.WaitRequest;

/**
 * One communication of an {@link Mp}: a send, a receive, a put or a get (LibMP's {@code mp_request_t}).
 * A handle with a defined life ({@link RequestState}); once released it is dead, and using it again is
 * an error rather than an alias of another request. Not thread-safe: its {@link Mp} drives it.
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
        GET
    }

    final Mp owner;
    final long id;
    final Kind kind;
    final int peer;
    final long bytes;
    final boolean nowait;
    RequestState state;
    /** The prepared send, for requests rung by an executor other than the CPU; else null. */
    SendRequest send;
    /** The prepared wait for its CQE; null for NOWAIT puts, which write none. */
    WaitRequest wait;
    /** Whether the CPU released its CQE (it will not be waited on by a stream). */
    boolean releasedOnCpu;
    /** Its position in its peer's {@link RequestFifo}. */
    long fifoPosition;
    /** The descriptor queue or KI export holding its send ring, until posted; else null. */
    Object stagedSend;
    /** The descriptor queue or KI export holding its completion wait, until posted; else null. */
    Object stagedWait;
    CompletionStatus status;
    ErrorDetail detail;
    int received;

    MpRequest(Mp owner, long id, Kind kind, int peer, long bytes, boolean nowait) {
        this.owner = owner;
        this.id = id;
        this.kind = kind;
        this.peer = peer;
        this.bytes = bytes;
        this.nowait = nowait;
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

    /** @return for a completed receive, the bytes that arrived; for other kinds, the bytes posted */
    public long byteCount() {
        return kind == Kind.RECV && status != null ? received : bytes;
    }

    /** @return whether this is a NOWAIT put, which nobody waits on */
    public boolean isNowait() {
        return nowait;
    }

    String describe() {
        String what = switch (kind) {
            case SEND -> "send to rank " + peer;
            case RECV -> "receive from rank " + peer;
            case PUT -> "put to rank " + peer;
            case GET -> "get from rank " + peer;
        };
        return what + " (request #" + id + ", " + bytes + " bytes)";
    }

    @Override
    public String toString() {
        return "MpRequest{" + describe() + ", " + state + (status != null ? ", " + status : "") + "}";
    }
}
