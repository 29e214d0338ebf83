package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.coll.Communicator;

import java.util.HashMap;
import java.util.Map;

/**
 * The runtime's state for one communicator: the kinds of call its members agreed on, each with what it resolved
 * to, and the direct connections of its blocking runs (null where the members cannot map one another's memory, or
 * the communicator has one rank: the put path). Made by the first call on the communicator, which every member
 * makes at the same point (it agrees with the others, so all of them are there). Driven by one thread.
 */
final class CommCalls implements AutoCloseable {
    private record Key(long kind, long elems) {
    }

    final Communicator comm;
    final DirectChannel direct;
    private final Map<Key, PreparedCall> calls = new HashMap<>();
    /** The last kind found: a loop of one call finds it without a map look-up. */
    private PreparedCall last;
    /**
     * The program of the last run on this communicator that used the runtime's window (a blocking run on the put
     * path, or a stream run), or null: a run of another program synchronizes the members first.
     */
    MscclProgram lastWindowProgram;

    CommCalls(Communicator comm, DirectChannel direct) {
        this.comm = comm;
        this.direct = direct;
    }

    /**
     * @param kind  the call's {@link CallRecord#kind}
     * @param elems its count
     * @return the kind's prepared call, or null if its members have not agreed on it yet
     */
    PreparedCall find(long kind, long elems) {
        PreparedCall p = last;
        if (p != null && p.record.kind() == kind && p.record.elems() == elems) {
            return p;
        }
        p = calls.get(new Key(kind, elems));
        if (p != null) {
            last = p;
        }
        return p;
    }

    void add(PreparedCall p) {
        calls.put(new Key(p.record.kind(), p.record.elems()), p);
        last = p;
    }

    @Override
    public void close() {
        if (direct != null) {
            direct.close();
        }
    }
}
