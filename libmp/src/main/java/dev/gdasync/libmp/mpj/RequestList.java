package dev.gdasync.libmp.mpj;

import java.util.ArrayList;
import java.util.List;

/**
 * A list of the device's requests in the order they joined, linked through the requests themselves: adding and
 * removing allocate nothing and cost a few stores, where a hash set cost a hash, a node and a lookup on every message.
 * A request is in at most one list of each kind at a time: the pending ones, and the completed ones nobody has seen
 * yet (what {@code peek} hands out). Guarded by the device's lock.
 */
final class RequestList {
    /** Which of the request's two pairs of links this list uses. */
    enum Kind { PENDING, COMPLETED }

    private final Kind kind;
    private DeviceRequest head;
    private DeviceRequest tail;

    RequestList(Kind kind) {
        this.kind = kind;
    }

    /** Appends a request that is not in the list (a request already in it stays where it is). */
    void add(DeviceRequest r) {
        if (in(r)) {
            return;
        }
        setIn(r, true);
        setPrev(r, tail);
        setNext(r, null);
        if (tail == null) {
            head = r;
        } else {
            setNext(tail, r);
        }
        tail = r;
    }

    /** Removes a request if it is in the list. */
    void remove(DeviceRequest r) {
        if (!in(r)) {
            return;
        }
        DeviceRequest p = prev(r);
        DeviceRequest n = next(r);
        if (p == null) {
            head = n;
        } else {
            setNext(p, n);
        }
        if (n == null) {
            tail = p;
        } else {
            setPrev(n, p);
        }
        setPrev(r, null);
        setNext(r, null);
        setIn(r, false);
    }

    /** @return the oldest request, removed, or null when the list is empty */
    DeviceRequest poll() {
        DeviceRequest r = head;
        if (r != null) {
            remove(r);
        }
        return r;
    }

    boolean isEmpty() {
        return head == null;
    }

    /** Empties the list. */
    void clear() {
        while (head != null) {
            remove(head);
        }
    }

    /** @return the requests, oldest first, in a list of their own (the caller may change this list meanwhile) */
    List<DeviceRequest> snapshot() {
        List<DeviceRequest> all = new ArrayList<>();
        for (DeviceRequest r = head; r != null; r = next(r)) {
            all.add(r);
        }
        return all;
    }

    private boolean in(DeviceRequest r) {
        return kind == Kind.PENDING ? r.inPending : r.inCompleted;
    }

    private void setIn(DeviceRequest r, boolean in) {
        if (kind == Kind.PENDING) {
            r.inPending = in;
        } else {
            r.inCompleted = in;
        }
    }

    private DeviceRequest prev(DeviceRequest r) {
        return kind == Kind.PENDING ? r.pendingPrev : r.completedPrev;
    }

    private DeviceRequest next(DeviceRequest r) {
        return kind == Kind.PENDING ? r.pendingNext : r.completedNext;
    }

    private void setPrev(DeviceRequest r, DeviceRequest p) {
        if (kind == Kind.PENDING) {
            r.pendingPrev = p;
        } else {
            r.completedPrev = p;
        }
    }

    private void setNext(DeviceRequest r, DeviceRequest n) {
        if (kind == Kind.PENDING) {
            r.pendingNext = n;
        } else {
            r.completedNext = n;
        }
    }
}
