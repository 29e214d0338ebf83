package dev.gdasync.libmp.mpj;

import mpjdev.Request;
import mpjdev.Status;

/**
 * An MPJ request of a {@link GdasyncDevice}: a send or a receive. The device completes it under its lock (sets the
 * status, or the error); the thread that first sees it complete through {@link #iwait} or {@link #itest} runs MPJ's
 * completion handlers (which unpack a received buffer), once, outside the lock.
 */
final class DeviceRequest extends Request {
    /** What the request is, for messages. */
    enum Kind { SEND, SYNC_SEND, RECEIVE }

    final GdasyncDevice device;
    final Kind kind;
    /** The peer's rank in the job (or the wildcard for a receive from any source). */
    final int peer;
    final int tag;
    final int context;
    /** The receive's buffer; null for a send. */
    final mpjbuf.Buffer buffer;
    // Guarded by the device's lock.
    Status status;
    String error;
    boolean done;
    /** For a synchronous send: every fragment copied (the acknowledgement may come before or after). */
    boolean copied;
    /**
     * For a send read by its receiver straight from MPJ's packed buffer (a rendezvous without a copy): it completes
     * only once the receiver has read it, as a synchronous send does.
     */
    boolean awaitsRead;
    /** For a synchronous send: the receiver's acknowledgement arrived. */
    boolean acknowledged;
    /**
     * A receive cancelled before it matched a message ({@link GdasyncDevice#cancel}): it is done, with no data and no
     * error, and MPJ's handlers (which unpack the buffer) never run for it. Set with {@link #done}, under the lock.
     */
    boolean cancelled;
    /**
     * The completion words of the streams waiting on this request ({@link MpjOnStream#waitOnStream}), raised once it
     * completed and MPJ's handlers ran; null while none. Written under the device's lock; volatile so that a request's
     * completion with no stream waiting on it (nearly every one) looks without taking the lock again.
     */
    volatile java.util.List<dev.gdasync.gdsync.memop.MemoryWord> streamWords;
    // The links of the device's two request lists (RequestList), guarded by the device's lock.
    boolean inPending;
    DeviceRequest pendingPrev;
    DeviceRequest pendingNext;
    boolean inCompleted;
    DeviceRequest completedPrev;
    DeviceRequest completedNext;
    /** Whether MPJ's completion handlers ran. Only the device's waiting threads touch it, under the handler lock. */
    private boolean handled;

    DeviceRequest(GdasyncDevice device, Kind kind, int peer, int tag, int context, mpjbuf.Buffer buffer, Status status) {
        this.device = device;
        this.kind = kind;
        this.peer = peer;
        this.tag = tag;
        this.context = context;
        this.buffer = buffer;
        this.status = status;
    }

    @Override
    public Status iwait() {
        return device.await(this);
    }

    @Override
    public Status itest() {
        return device.test(this);
    }

    @Override
    public void free() {
        // Nothing to release: the device holds no resource per request once it completed.
    }

    @Override
    public boolean isnull() {
        return false;
    }

    /**
     * MPI's cancel ({@code mpi.Request.Cancel} calls it): a receive that has not matched a message is withdrawn and
     * completes as cancelled; a receive that matched or completed, and every send, is not cancelled and completes as
     * it would have.
     *
     * @return whether the request was cancelled (MPJ then marks it null: its {@code Wait} and {@code Test} return at
     *         once)
     */
    @Override
    public boolean cancel() {
        return device.cancel(this);
    }

    /** Runs MPJ's completion handlers the first time it is called for this request; never for a cancelled one. */
    synchronized void runHandlersOnce(Status s) {
        if (!handled && !cancelled) {
            handled = true;
            complete(s);
        }
    }

    @Override
    public String toString() {
        return kind + (kind == Kind.RECEIVE ? " from " : " to ") + (peer == xdev.Device.ANY_SOURCE ? "any rank" : "rank " + peer)
                + " tag " + tag + " context " + context;
    }
}
