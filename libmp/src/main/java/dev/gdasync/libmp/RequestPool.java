package dev.gdasync.libmp;

/**
 * An {@link Mp}'s request slots (LibMP's request pool): at most {@link MpConfig#requestPool()} requests
 * are outstanding at once. A slot is taken when a request is made and given back when the request ends
 * (released after a wait or test, retired NOWAIT put, or cancelled when the NIC refused it), so the count
 * is back at the capacity whenever nothing is outstanding. Handles are not recycled: a dead request
 * stays dead, and each request has its own id.
 */
final class RequestPool {
    private final MpContext owner;
    private final int capacity;
    private int available;
    private long nextId = 1;

    RequestPool(MpContext owner, int capacity) {
        this.owner = owner;
        this.capacity = capacity;
        this.available = capacity;
    }

    /** @return the most requests outstanding at once */
    int capacity() {
        return capacity;
    }

    /** @return requests that can be made now */
    int available() {
        return available;
    }

    /** @return whether no request can be made before one ends */
    boolean isEmpty() {
        return available == 0;
    }

    /**
     * Makes a PREPARED request in a free slot. Its owner reaps once before asking when the pool is
     * empty: NOWAIT puts executed since the last reap give their slots back then.
     *
     * @return the request
     * @throws IllegalStateException if every slot is taken
     */
    MpRequest take(MpRequest.Kind kind, int peer, long bytes, boolean nowait) {
        if (available == 0) {
            throw new IllegalStateException("request pool exhausted: all " + capacity
                    + " requests are outstanding; wait for some (or raise MpConfig.requestPool)");
        }
        available--;
        return new MpRequest(owner, nextId++, kind, peer, bytes, nowait);
    }

    /** Releases a completed request (COMPLETE → RELEASED) and takes its slot back. */
    void release(MpRequest r) {
        requireTaken();
        r.release();
        available++;
    }

    /** Retires an executed NOWAIT put (PENDING_NOWAIT → RELEASED) and takes its slot back. */
    void retire(MpRequest r) {
        requireTaken();
        r.retire();
        available++;
    }

    /** Cancels a request the NIC refused (PREPARED → RELEASED) and takes its slot back. */
    void cancel(MpRequest r) {
        requireTaken();
        r.cancel();
        available++;
    }

    /**
     * A request ends once (its state transition refuses a second end), so a slot can only come back while one is
     * taken; this states it where the count changes, so that no path can raise the count past the capacity.
     */
    private void requireTaken() {
        if (available == capacity) {
            throw new IllegalStateException("request pool: no request is outstanding, so none can give a slot back");
        }
    }
}
