package dev.gdasync.libmp.mpj;

import xdev.Device;
import xdev.ProcessID;
import xdev.XDevException;

import java.util.UUID;

/**
 * The MPJ process ids of a job's ranks: rank r is the UUID {@code (JOB_BITS, r)}, the same on every rank, so the ids
 * MPJ's groups hold map back to ranks without a lookup; and the statuses that name them.
 */
final class ProcessIds {
    /** The high half of every rank's id. */
    private static final long JOB_BITS = 0x6764617379_6E63L;

    private final ProcessID[] ids;

    /** @param size the job's size */
    ProcessIds(int size) {
        ids = new ProcessID[size];
        for (int r = 0; r < size; r++) {
            ids[r] = new ProcessID(new UUID(JOB_BITS, r));
        }
    }

    /** @return a copy of every rank's id, in rank order */
    ProcessID[] all() {
        return ids.clone();
    }

    /** @return rank r's id */
    ProcessID of(int r) {
        return ids[r];
    }

    /** @return the status of a completed send to a rank */
    mpjdev.Status sendStatus(int peer, int tag) {
        mpjdev.Status s = new mpjdev.Status();
        s.source = peer;
        s.srcID = ids[peer].uuid();
        s.tag = tag;
        return s;
    }

    /** @return a status filled with a message's envelope: its source (rank and id), tag, first section and length */
    mpjdev.Status envelope(Inbound m, mpjdev.Status s) {
        return envelope(m.source, m.tag, m.type, m.elements, m.staticLength, s);
    }

    /** @return a status filled with an envelope: source rank, tag, first section's type and element count, length */
    mpjdev.Status envelope(int source, int tag, int type, int elements, int length, mpjdev.Status s) {
        s.source = source;
        s.srcID = ids[source].uuid();
        s.tag = tag;
        s.numEls = elements;
        s.type = type < 0 ? null : mpjbuf.Type.getType(type);
        s.countInBytes = length;
        return s;
    }

    /**
     * @param call what is called, for the message
     * @param what which argument (destination, source)
     * @return the rank of an id
     * @throws XDevException if the id is null or not one of this job's
     */
    int rankOf(String call, String what, ProcessID id) {
        if (id == null) {
            throw new XDevException(call + ": the " + what + " is null");
        }
        UUID u = id.uuid();
        if (u == null || u.getMostSignificantBits() != JOB_BITS || u.getLeastSignificantBits() < 0
                || u.getLeastSignificantBits() >= ids.length) {
            throw new XDevException(call + ": the " + what + " " + u + " is not a process of this job (" + ids.length
                    + " ranks)");
        }
        return (int) u.getLeastSignificantBits();
    }

    /** @return the rank of a source id, or {@link Device#ANY_SOURCE} for MPJ's wildcard */
    int sourceOf(String call, ProcessID src) {
        if (src == Device.ANY_SRC || (src != null && src.uuid() != null && src.uuid().equals(Device.ANY_SRC.uuid()))) {
            return Device.ANY_SOURCE;
        }
        return rankOf(call, "source", src);
    }
}
