package dev.gdasync.libmp.mpj;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * MPI's matching for one device: the posted receives in the order they were posted and the unexpected messages in the
 * order they arrived. A receive takes the first unexpected message it matches; a message the first posted receive that
 * matches it. Guarded by the device's lock.
 */
final class Matching {
    private final List<DeviceRequest> posted = new ArrayList<>();
    private final List<Inbound> unexpected = new ArrayList<>();

    /** A receive found no unexpected message: it waits for one. */
    void post(DeviceRequest r) {
        posted.add(r);
    }

    /** @return whether no message waits among the unexpected ones */
    boolean noneUnexpected() {
        return unexpected.isEmpty();
    }

    /** A complete message no receive took: it waits for one. */
    void park(Inbound m) {
        unexpected.add(m);
    }

    /**
     * @return the first unexpected message that a receive with these arguments takes, removed, or null
     */
    Inbound takeUnexpected(int src, int tag, int context) {
        for (Iterator<Inbound> it = unexpected.iterator(); it.hasNext(); ) {
            Inbound m = it.next();
            if (m.matches(src, tag, context)) {
                it.remove();
                return m;
            }
        }
        return null;
    }

    /** @return the first unexpected message that a receive with these arguments would take, left in place, or null */
    Inbound peekUnexpected(int src, int tag, int context) {
        for (Inbound m : unexpected) {
            if (m.matches(src, tag, context)) {
                return m;
            }
        }
        return null;
    }

    /** @return the first posted receive that takes a message, removed, or null */
    DeviceRequest takePosted(Inbound m) {
        for (Iterator<DeviceRequest> it = posted.iterator(); it.hasNext(); ) {
            DeviceRequest r = it.next();
            if (m.matches(r.peer, r.tag, r.context)) {
                it.remove();
                return r;
            }
        }
        return null;
    }

    /**
     * A message's header arrived: binds it to the first posted receive that matches it, which is removed, when its
     * static section fits that receive's buffer.
     *
     * @return the receive, or null (the message then assembles itself and is matched once complete)
     */
    DeviceRequest bind(Inbound m) {
        for (Iterator<DeviceRequest> it = posted.iterator(); it.hasNext(); ) {
            DeviceRequest r = it.next();
            if (m.matches(r.peer, r.tag, r.context)) {
                MemorySegment target = MpjBuffers.target(r.buffer, m.staticLength);
                if (target == null) {
                    return null;
                }
                it.remove();
                m.bindTo(r, target);
                return r;
            }
        }
        return null;
    }

    /**
     * Withdraws a posted receive (MPI's cancel): no message matches it afterwards.
     *
     * @return whether it was posted; false once it matched a message (or was never posted)
     */
    boolean unpost(DeviceRequest r) {
        for (Iterator<DeviceRequest> it = posted.iterator(); it.hasNext(); ) {
            if (it.next() == r) {
                it.remove();
                return true;
            }
        }
        return false;
    }

    /** The device failed: the posted receives are failed by it. */
    void clearPosted() {
        posted.clear();
    }
}
